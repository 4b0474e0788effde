package mcpserver

import (
	"bytes"
	"context"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
)

// Progress notifications of a running bash call (README "MCP server"): at most one per
// [ProgressInterval], each with the output so far as progress (bytes: it grows with every notification,
// as MCP wants) and the tail of the output (lines a CR redrew collapsed, as in the result), at most
// [ProgressTailBytes] from a line start, as its message. The first goes out as soon as there is output,
// the next when more arrived and the interval passed. While the command is silent a heartbeat goes out
// every [ProgressHeartbeat], with the same tail and progress one more than the last (so progress is the
// bytes so far plus the heartbeats sent): a client that resets its timeout on progress never times out
// a quiet build.
const (
	ProgressInterval  = time.Second
	ProgressTailBytes = 4096
	// ProgressHeartbeat is at most 5 s, as promised, with a second to spare for a busy machine.
	ProgressHeartbeat = 4 * time.Second
)

// progress sends the progress notifications of one call.
type progress struct {
	notify   func(progress float64, message string)
	interval time.Duration    // ProgressInterval
	beat     <-chan time.Time // ticks every ProgressHeartbeat
	stopBeat func()

	mu    sync.Mutex
	tail  *sink.LiveTail // the newest output, CR-redrawn lines collapsed (again after a gap in the relay)
	total int64          // the sink's bytes so far, or one more than before when a CR made them fewer: MCP's progress only grows
	kick  chan struct{}
	quit  chan struct{}
	done  chan struct{}
}

// startProgress starts the sender of a call's progress notifications.
func startProgress(ctx context.Context, session *mcp.ServerSession, token any) *progress {
	heartbeat := time.NewTicker(ProgressHeartbeat)
	return newProgress(func(progress float64, message string) {
		_ = session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: progress, Message: message})
	}, ProgressInterval, heartbeat.C, heartbeat.Stop)
}

// newProgress starts a sender that calls notify at most once per interval for new output, and at each
// tick of beat.
func newProgress(notify func(float64, string), interval time.Duration, beat <-chan time.Time, stopBeat func()) *progress {
	p := &progress{notify: notify, interval: interval, beat: beat, stopBeat: stopBeat, tail: sink.NewLiveTail(ProgressTailBytes),
		kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go p.send()
	return p
}

// observe takes the output as it arrives (a pipeline.Observer).
func (p *progress) observe(l run.LiveText) {
	p.mu.Lock()
	p.total = max(l.TotalBytes, p.total+1)
	if l.Skipped > 0 {
		p.tail = sink.NewLiveTail(ProgressTailBytes) // the text does not continue what came before
	}
	p.tail.Write(l.Text)
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// stop ends the sender; no notification goes out after it returns.
func (p *progress) stop() {
	close(p.quit)
	<-p.done
}

func (p *progress) send() {
	defer close(p.done)
	defer p.stopBeat()
	var sent, beats int64 // bytes of output notified, heartbeats sent
	var last time.Time
	for {
		beat := false
		select {
		case <-p.kick:
		case <-p.beat:
			beat = true
		case <-p.quit:
			return
		}
		if wait := p.interval - time.Since(last); !beat && !last.IsZero() && wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-p.quit:
				timer.Stop()
				return
			}
		}
		p.mu.Lock()
		total, message := p.total, tailText(p.tail.Tail(), ProgressTailBytes)
		p.mu.Unlock()
		switch {
		case total == sent && beat: // silent: a heartbeat
			beats++
		case total == sent:
			continue
		case beat && time.Since(last) < p.interval:
			continue // new output, which its kick sends once the interval passed
		}
		sent, last = total, time.Now()
		p.notify(float64(total+beats), message)
	}
}

// tailText is the end of b in at most max bytes: from the first line start in that window when there is
// one, else from a character boundary; without the final newline.
func tailText(b []byte, max int) string {
	if len(b) > max {
		cut := b[len(b)-max:]
		if i := bytes.IndexByte(cut, '\n'); i >= 0 && i < len(cut)-1 {
			cut = cut[i+1:]
		} else {
			for len(cut) > 0 && !utf8.RuneStart(cut[0]) {
				cut = cut[1:]
			}
		}
		b = cut
	}
	return string(bytes.TrimSuffix(b, []byte("\n")))
}
