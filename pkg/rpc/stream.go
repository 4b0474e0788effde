package rpc

import (
	"encoding/json"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
)

// streamer turns a run's live output into update events (README "For agent integrators"): the sanitized
// tail, at most max bytes (progress bars redrawn by a CR collapsed, as in the result: sink.LiveTail), and
// the sink's exact counts of the whole stream at that text's end, so the text is the stream's tail at its
// counts; sent only when the output changed and at most once per UpdateInterval. Where the relay dropped
// live text (run.LiveText.Skipped) the tail starts again after the gap: no marker, no text from before it.
// Its memory is bounded: the tail kept is at most 2×max bytes.
type streamer struct {
	l   *loop
	id  json.RawMessage
	max int

	mu      sync.Mutex
	live    *sink.LiveTail // made on the first output, and again after a gap
	bytes   int64          // the counts at the tail's end
	lines   int64
	changed bool
	last    time.Time   // when the last update was sent
	timer   *time.Timer // a pending update, when one is due
	done    bool
}

// observe takes the next piece of the run's sanitized output (a pipeline.Observer).
func (s *streamer) observe(l run.LiveText) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || l.Text == "" {
		return
	}
	if s.live == nil || l.Skipped > 0 {
		s.live = sink.NewLiveTail(s.max)
	}
	s.live.Write(l.Text)
	s.bytes, s.lines = l.TotalBytes, l.TotalLines
	s.changed = true
	if wait := UpdateInterval - time.Since(s.last); wait <= 0 {
		s.flush()
	} else if s.timer == nil {
		s.timer = time.AfterFunc(wait, s.tick)
	}
}

func (s *streamer) tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timer = nil
	if !s.done && s.changed {
		s.flush()
	}
}

// flush sends the update; s.mu is held, so no update is written after stop returned.
func (s *streamer) flush() {
	t := s.live.Tail()
	if len(t) > s.max {
		cut := len(t) - s.max
		for cut < len(t) && !utf8.RuneStart(t[cut]) {
			cut++
		}
		t = t[cut:]
	}
	s.l.send(Update{ID: s.id, Type: TypeUpdate, Text: string(t), TotalBytes: s.bytes, TotalLines: s.lines})
	s.changed, s.last = false, time.Now()
}

// stop ends the updates: none is written once it returned (the response comes next).
func (s *streamer) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}
