package run

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The run's behaviours with the output pipe read directly (off the runtime's poller) from the first read
// on, as a large output's is from directFrom bytes on.
func TestRunDirectReads(t *testing.T) {
	defer func(n int64) { directFrom = n }(directFrom)
	directFrom = 0
	for _, tc := range []struct {
		name string
		test func(*testing.T)
	}{
		{"ExitAndOrder", TestRunExitAndOrder},
		{"BackgroundHoldingPipeDoesNotHang", TestRunBackgroundHoldingPipeDoesNotHang},
		{"BackgroundWriterDrainBounded", TestRunBackgroundWriterDrainBounded},
		{"LimitMetClosesPipeOnSlowProducer", TestRunLimitMetClosesPipeOnSlowProducer},
		{"LimitMetFiniteCommandEnds", TestRunLimitMetFiniteCommandEnds},
		{"OutputRefusedClosesPipe", TestRunOutputRefusedClosesPipe},
		{"DrainReadsWhatThePipeHolds", TestRunDrainReadsWhatThePipeHolds},
		{"Cancel", TestRunCancel},
	} {
		t.Run(tc.name, tc.test)
	}
}

// A large output moves off the poller after directFrom bytes and is read whole, byte for byte.
func TestRunLargeOutputReadDirect(t *testing.T) {
	const size = 17 * 370000 // whole lines, 6.3 MB
	var out buffer
	var direct bool
	testHookBeforeRead = func(d *drainer) {
		if p, ok := d.r.(*pipeReader); ok && p.f == nil {
			direct = true
		}
	}
	defer func() { testHookBeforeRead = nil }()
	o, err := loop(context.Background(), spec(t, "yes 0123456789abcdef | head -c 6290000; echo end", &out))
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if o.ExitCode != 0 || o.OutputIncomplete || len(got) != size+4 || !strings.HasSuffix(got, "\nend\n") ||
		strings.Count(got, "0123456789abcdef\n") != size/17 {
		t.Errorf("outcome %+v, %d bytes, ends %q", o, len(got), got[max(0, len(got)-30):])
	}
	if !direct {
		t.Error("the reader never left the poller")
	}
}

// newDirect returns a pipeReader that reads directly from its first read on, and the pipe's write end.
func newDirect(t *testing.T) (*pipeReader, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := newPipeReader(r).(*pipeReader)
	p.goDirect()
	if p.f != nil {
		t.Fatal("not direct")
	}
	t.Cleanup(func() { p.Close(); w.Close() })
	return p, w
}

func TestPipeReaderDirect(t *testing.T) {
	p, w := newDirect(t)
	buf := make([]byte, 64)

	// Data, then a deadline that has passed: a Read returns at once, as on the poller.
	w.WriteString("abc")
	if n, err := p.Read(buf); n != 3 || err != nil || string(buf[:n]) != "abc" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	p.SetReadDeadline(time.Now().Add(-time.Second))
	if _, err := p.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("past deadline: %v", err)
	}

	// A Read waiting on an empty pipe with no deadline returns when one is set, at the deadline.
	p.SetReadDeadline(time.Time{})
	done := make(chan error, 1)
	go func() {
		_, err := p.Read(buf)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("read returned on an empty pipe: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	p.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("waiting read: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a new deadline did not reach the waiting read")
	}

	// The writers gone: what is left, then EOF.
	p.SetReadDeadline(time.Time{})
	w.WriteString("de")
	if !p.hasData() {
		t.Error("hasData is false with 2 bytes in the pipe")
	}
	w.Close()
	if n, err := p.Read(buf); n != 2 || err != nil {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if n, err := p.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("at the end: %d, %v", n, err)
	}
	if p.hasData() {
		t.Error("hasData is true on an empty pipe")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.SetReadDeadline(time.Now()); !errors.Is(err, os.ErrClosed) {
		t.Errorf("deadline after close: %v", err)
	}
}

// The output pipe's read end is on the runtime's poller (a deadline works), its write end is a blocking
// descriptor off it (the shell gets it as is), both close on exec, and the pipe holds pipeBytes where the
// system allows that.
func TestOutputPipe(t *testing.T) {
	r, w, err := outputPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if err := r.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Errorf("read end: SetReadDeadline: %v (want it on the poller)", err)
	}
	if _, err := r.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read end: empty pipe read: %v, want the deadline", err)
	}
	if err := w.SetWriteDeadline(time.Now()); !errors.Is(err, os.ErrNoDeadline) {
		t.Errorf("write end: SetWriteDeadline: %v, want os.ErrNoDeadline (off the poller)", err)
	}
	fcntl := func(f *os.File, cmd int) int { // through SyscallConn: Fd would make the read end blocking
		t.Helper()
		rc, err := f.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		v := -1
		if err := rc.Control(func(fd uintptr) { v, err = unix.FcntlInt(fd, cmd, 0) }); err != nil || v < 0 {
			t.Fatalf("%s: fcntl %d: %v", f.Name(), cmd, err)
		}
		return v
	}
	for _, end := range []*os.File{r, w} {
		if fcntl(end, unix.F_GETFD)&unix.FD_CLOEXEC == 0 {
			t.Errorf("%s: not close-on-exec", end.Name())
		}
	}
	if fcntl(w, unix.F_GETFL)&unix.O_NONBLOCK != 0 {
		t.Errorf("write end: O_NONBLOCK set, want a blocking descriptor for the shell")
	}
	max := pipeBytes
	if b, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err == nil && os.Geteuid() != 0 {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n < max {
			max = 0 // a plain user may not grow it past pipe-max-size: the default is kept
		}
	}
	if size := fcntl(r, unix.F_GETPIPE_SZ); size < max {
		t.Errorf("pipe holds %d bytes, want %d", size, pipeBytes)
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	_ = r.SetReadDeadline(time.Time{})
	b, err := io.ReadAll(r)
	if err != nil || string(b) != "x" {
		t.Errorf("read %q, %v; want \"x\"", b, err)
	}
}

// What PrepareNext made is taken by the next run that needs it, once: that run's stdin is the /dev/null
// made ahead and its output goes through the pipe made ahead; the run after makes its own.
func TestPrepareNext(t *testing.T) {
	PrepareNext()
	next.Lock()
	null, r := next.null, next.r
	next.Unlock()
	if null == nil || r == nil {
		t.Fatalf("PrepareNext made /dev/null %v and a pipe %v", null, r)
	}
	in, closeIn, err := openStdin(nil)
	if err != nil || in != null {
		t.Fatalf("openStdin: %v, %v; want the /dev/null made ahead", in, err)
	}
	closeIn()
	in2, closeIn2, err := openStdin(nil)
	if err != nil || in2 == null {
		t.Fatalf("second openStdin: %v, %v; want one of its own", in2, err)
	}
	closeIn2()
	pr, pw, err := outputEnds(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := pr.(*pipeReader); !ok || p.f != r {
		t.Errorf("outputEnds: read end %v, want the pipe made ahead", pr)
	}
	pr.Close()
	pw.Close()
	pr2, pw2, err := outputEnds(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := pr2.(*pipeReader); !ok || p.f == r {
		t.Errorf("second outputEnds: read end %v, want a pipe of its own", pr2)
	}
	pr2.Close()
	pw2.Close()

	// A run that takes neither (stdin of its own and, here, the pipe taken before it) closes what was made
	// ahead for it: nothing outlives the run after PrepareNext.
	PrepareNext()
	next.Lock()
	null = next.null
	next.Unlock()
	if r, w := takePipe(); r != nil {
		r.Close()
		w.Close()
	}
	var got buffer
	j := spec(t, "cat", &got)
	j.Stdin = strings.NewReader("own input")
	if o, err := loop(context.Background(), j); err != nil || o.ExitCode != 0 || got.String() != "own input" {
		t.Errorf("run with its own stdin: %+v, %v, output %q", o, err, got.String())
	}
	next.Lock()
	left := next.null
	next.Unlock()
	if left != nil {
		t.Errorf("the /dev/null made ahead is still kept after a run that did not take it")
	}
	if _, err := null.Stat(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("the /dev/null made ahead: Stat %v, want it closed", err)
	}

	// A run after PrepareNext: its input is empty, its output comes through.
	PrepareNext()
	var out buffer
	o, err := loop(context.Background(), spec(t, "read x; echo \"got [$x]\"; exit 3", &out))
	if err != nil || o.ExitCode != 3 || out.String() != "got []\n" {
		t.Errorf("run after PrepareNext: %+v, %v, output %q", o, err, out.String())
	}
}
