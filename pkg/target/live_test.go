package target

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentbash/agentbash/pkg/result"
	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
)

// TestLiveIncremental: the far side's updates (the tail of the whole output and its counts) become pieces
// that continue one another: what the observer is given, applied as the sink's marks are (sink.LiveTail), is
// the far side's tail, never the same text twice.
func TestLiveIncremental(t *testing.T) {
	for name, tt := range map[string]struct {
		updates []update
		want    []run.LiveText
	}{
		"grows": {
			[]update{{"a\n", 2, 1}, {"a\nb\n", 4, 2}, {"a\nb\nc\n", 6, 3}, {"a\nb\nc\n", 6, 3}},
			[]run.LiveText{{Text: "a\n", TotalBytes: 2, TotalLines: 1}, {Text: "b\n", TotalBytes: 4, TotalLines: 2},
				{Text: "c\n", TotalBytes: 6, TotalLines: 3}},
		},
		"tail of a longer stream": { // the tail holds 4 bytes; more arrived than it holds
			[]update{{"cd\n", 10, 3}, {"d\nef", 12, 3}, {"\nxyz", 20, 5}},
			[]run.LiveText{{Text: "cd\n", TotalBytes: 10, TotalLines: 3, Skipped: 7}, {Text: "ef", TotalBytes: 12, TotalLines: 3},
				{Text: "\nxyz", TotalBytes: 20, TotalLines: 5, Skipped: 4}},
		},
		"redrawn line": { // 10% → 100% (a CR): the counts grow, the open line is not the one passed on
			[]update{{"get\n10%", 7, 1}, {"get\n100%", 8, 1}, {"get\n5", 5, 1}, {"get\n5%\ndone\n", 12, 3}},
			[]run.LiveText{{Text: "get\n10%", TotalBytes: 7, TotalLines: 1}, {Text: "\r100%", TotalBytes: 8, TotalLines: 1},
				{Text: "\r5", TotalBytes: 5, TotalLines: 1}, {Text: "%\ndone\n", TotalBytes: 12, TotalLines: 3}},
		},
		"a redrawn first line": { // no newline yet: the whole text is the line
			[]update{{"ab", 2, 0}, {"a\u00e9b", 4, 0}},
			[]run.LiveText{{Text: "ab", TotalBytes: 2}, {Text: "\ra\u00e9b", TotalBytes: 4}},
		},
		"escapes": {
			[]update{{"\x1b]0;owned\x07hi\x1b[2J\n", 17, 1}},
			[]run.LiveText{{Text: "hi\n", TotalBytes: 17, TotalLines: 1}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			var got []run.LiveText
			l := &live{obs: func(p run.LiveText) { got = append(got, p) }}
			for _, u := range tt.updates {
				l.update(u)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("pieces\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// TestLiveOverRPC: a streamed run on a target (the real rpc) gives its observer pieces whose text, joined,
// is the output exactly, once; the result says it was streamed (a terminal does not print it again).
func TestLiveOverRPC(t *testing.T) {
	var b strings.Builder
	tail := sink.NewLiveTail(1 << 20)
	r := open(t, rpcURI(t)).Run(ctx(t), command(`for i in 1 2 3 4 5; do echo "step $i"; sleep 0.15; done`),
		func(l run.LiveText) {
			if l.Skipped > 0 {
				t.Errorf("skipped %d", l.Skipped)
			}
			b.WriteString(l.Text)
			tail.Write(l.Text)
		})
	want := "step 1\nstep 2\nstep 3\nstep 4\nstep 5\n"
	if r.Details.Status != result.StatusExited || b.String() != want || string(tail.Tail()) != want || !r.Streamed {
		t.Errorf("%+v: observed %q", r.Details, b.String())
	}
}
