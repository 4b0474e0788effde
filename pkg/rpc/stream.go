package rpc

import (
	"encoding/json"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentbash/agentbash/pkg/sink"
)

// streamer turns a run's live output into update events (SPEC §7.2): the sanitized tail, at most max
// bytes (progress bars redrawn by a CR collapsed, as in the result: sink.LiveTail), and the totals so far,
// sent only when the output changed and at most once per UpdateInterval. Its memory is bounded: the tail
// kept is at most 2×max bytes.
type streamer struct {
	l   *loop
	id  json.RawMessage
	max int

	mu      sync.Mutex
	live    *sink.LiveTail // made on the first output
	changed bool
	last    time.Time   // when the last update was sent
	timer   *time.Timer // a pending update, when one is due
	done    bool
}

// observe takes the next piece of the run's sanitized output (a pipeline.Observer).
func (s *streamer) observe(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || text == "" {
		return
	}
	if s.live == nil {
		s.live = sink.NewLiveTail(s.max)
	}
	s.live.Write(text)
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
	total, lines := s.live.Total()
	if tail := s.live.Tail(); len(tail) > 0 && tail[len(tail)-1] != '\n' {
		lines++ // the line being written counts
	}
	s.l.send(Update{ID: s.id, Type: TypeUpdate, Text: string(t), TotalBytes: total, TotalLines: lines})
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
