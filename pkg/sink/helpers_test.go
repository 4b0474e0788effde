package sink

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/agentbash/agentbash/pkg/sanitize"
	"github.com/agentbash/agentbash/pkg/sanitize/sanitizetest"
)

// memArtifact is an in-memory artifact writer. failAfter >= 0 makes writes fail once that many
// bytes were taken (ENOSPC).
type memArtifact struct {
	buf       bytes.Buffer
	closed    int
	failAfter int
}

func (a *memArtifact) Write(p []byte) (int, error) {
	if a.failAfter >= 0 && a.buf.Len()+len(p) > a.failAfter {
		return 0, errors.New("no space left on device")
	}
	return a.buf.Write(p)
}

func (a *memArtifact) Close() error { a.closed++; return nil }

// harness runs a sink over input and records the artifact.
type harness struct {
	art    *memArtifact
	opens  int
	sum    Summary
	read   int   // bytes the sink consumed
	err    error // first Write error
	writes int
}

// feed writes in to a new sink in chunks (sizes from rng, or all at once when rng is nil), stopping
// at the first error, and closes it.
func feed(o Options, in []byte, rng *rand.Rand, maxChunk int) *harness {
	h := &harness{art: &memArtifact{failAfter: -1}}
	if o.OpenArtifact == nil {
		o.OpenArtifact = func() (io.WriteCloser, string, error) {
			h.opens++
			return h.art, "7", nil
		}
	}
	s := New(o)
	for rest := in; len(rest) > 0; {
		n := len(rest)
		if rng != nil {
			n = 1 + rng.IntN(min(maxChunk, len(rest)))
		}
		k, err := s.Write(rest[:n])
		h.writes++
		h.read += k
		rest = rest[k:]
		if err != nil {
			h.err = err
			break
		}
		if k != n {
			panic("short write without error")
		}
	}
	h.sum = s.Close()
	return h
}

// sameShown compares the fields of two summaries that do not depend on how much was read past a met
// head limit.
func sameShown(a, b Summary) bool {
	if a.Binary || b.Binary {
		return true // what was read decides (a NUL past the head limit may or may not be read)
	}
	return a.Text == b.Text && a.OutputLines == b.OutputLines && a.OutputBytes == b.OutputBytes &&
		a.ShownStart == b.ShownStart && a.ShownEnd == b.ShownEnd && a.PartialLine == b.PartialLine &&
		a.Binary == b.Binary && (a.LineOpen || b.LineOpen || a.LineBytes == b.LineBytes)
}

// core strips the artifact fields, the read-on state and warnings from a summary, for comparison with
// refSummary.
func core(s Summary) Summary {
	s.ArtifactID, s.ArtifactCapped, s.ArtifactOmitted, s.Warnings = "", false, 0, nil
	s.HeadLimitReached, s.Stopped = false, false
	return s
}

// checkSink runs the sink on in (at once and in random chunks) and checks it against the reference
// and against itself, plus the invariants of the artifact. It returns the whole-write harness.
func checkSink(t testing.TB, o Options, in []byte, seed uint64) *harness {
	t.Helper()
	whole := feed(o, in, nil, 0)
	checkOne(t, "whole", o, in, whole)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for _, maxChunk := range []int{1, 3, 17, 4096} {
		if maxChunk == 1 && len(in) > 1<<16 {
			continue
		}
		part := feed(o, in, rng, maxChunk)
		name := fmt.Sprintf("chunks<=%d", maxChunk)
		checkOne(t, name, o, in, part)
		if whole.sum.Stopped || part.sum.Stopped {
			if !sameShown(whole.sum, part.sum) {
				t.Fatalf("%s: shown part differs from a single write:\n got %+v\nwant %+v", name, part.sum, whole.sum)
			}
		} else if !reflect.DeepEqual(whole.sum, part.sum) {
			t.Fatalf("%s: summary differs from a single write:\n got %+v\nwant %+v", name, part.sum, whole.sum)
		}
	}
	return whole
}

func checkOne(t testing.TB, name string, o Options, in []byte, h *harness) {
	t.Helper()
	got := h.sum
	read := in[:h.read]
	want := refSummary(read, o)
	if !reflect.DeepEqual(core(got), want) {
		t.Fatalf("%s: summary differs from the reference (read %d of %d bytes):\n got %+v\nwant %+v", name, h.read, len(in), core(got), want)
	}
	if (h.err != nil) != got.Stopped || (h.err != nil && !errors.Is(h.err, ErrHeadLimit)) {
		t.Fatalf("%s: write error %v, Stopped %v", name, h.err, got.Stopped)
	}
	// The limit is met by a Write after which Head lines are complete (or the output is binary), and
	// only then may the sink stop, after its read-on bound (never in the Write that met the limit).
	met := o.Head >= 0 && len(read) > 0 && (want.Binary || int64(bytes.Count(sanitizetest.Reference(read, escMaxOf(o), owMaxOf(o)), newline)) >= int64(o.Head))
	if got.HeadLimitReached != met || (got.Stopped && !met) {
		t.Fatalf("%s: HeadLimitReached %v Stopped %v, want met %v", name, got.HeadLimitReached, got.Stopped, met)
	}
	if readOn := readOnOf(o); got.Stopped && int64(h.read) < readOn {
		t.Fatalf("%s: stopped after %d bytes, before the read-on bound %d", name, h.read, readOn)
	}
	maxB := o.MaxBytes
	if maxB <= 0 {
		maxB = DefaultMaxBytes
	}
	if len(got.Text) > maxB && !got.Binary {
		t.Fatalf("%s: text is %d bytes, window %d", name, len(got.Text), maxB)
	}
	checkClean(t, got.Text)
	// The artifact: written when something was cut, when binary, or when the raw stream overflowed.
	wantArt := got.Truncated || got.Binary || h.read > maxB
	if wantArt != (got.ArtifactID != "") || h.opens > 1 || (h.opens == 1 && h.art.closed != 1) {
		t.Fatalf("%s: artifact id %q, want one: %v (opens %d, closes %d)", name, got.ArtifactID, wantArt, h.opens, h.art.closed)
	}
	if got.ArtifactID == "" {
		return
	}
	capB := o.ArtifactMaxBytes
	if capB <= 0 {
		capB = DefaultArtifactMaxBytes
	}
	art := h.art.buf.Bytes()
	if int64(len(read)) <= capB {
		if !bytes.Equal(art, read) || got.ArtifactCapped || got.ArtifactOmitted != 0 {
			t.Fatalf("%s: artifact (%d bytes) is not the raw stream (%d bytes)", name, len(art), len(read))
		}
		return
	}
	omitted := int64(len(read)) - capB
	marker := fmt.Sprintf("\n[agentbash: %d bytes omitted: artifact capped at %s]\n", omitted, FormatSize(capB))
	if !got.ArtifactCapped || got.ArtifactOmitted != omitted || !bytes.HasPrefix(art, read[:capB]) ||
		!bytes.HasPrefix(art[capB:], []byte(marker)) {
		t.Fatalf("%s: capped artifact wrong: capped %v omitted %d (want %d), %q", name, got.ArtifactCapped, got.ArtifactOmitted, omitted, art[capB:])
	}
	tail := string(art[capB+int64(len(marker)):])
	wantTail := ""
	if !got.Binary {
		// The final window of the whole stream, when the head limit (if any) did not hide its end.
		oo := o
		oo.Head, oo.Tail = -1, -1
		w := refSummary(read, oo)
		if o.Head < 0 || w.TotalLines <= int64(o.Head) {
			wantTail = w.Text
		}
	}
	if tail != wantTail {
		t.Fatalf("%s: capped artifact ends with %q, want the final window %q", name, tail, wantTail)
	}
}

// checkClean checks that text is valid UTF-8 with no control characters but tab and newline.
func checkClean(t testing.TB, text string) {
	t.Helper()
	if err := sanitizetest.Clean(text); err != nil {
		t.Fatal(err)
	}
}

func escMaxOf(o Options) int {
	if o.escMax > 0 {
		return o.escMax
	}
	return sanitize.MaxEscapeBytes
}

func owMaxOf(o Options) int {
	if o.owMax > 0 {
		return o.owMax
	}
	return sanitize.MaxOverwriteBytes
}

func readOnOf(o Options) int64 {
	if o.readOn > 0 {
		return o.readOn
	}
	return HeadReadOnBytes
}
