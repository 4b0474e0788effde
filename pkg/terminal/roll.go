package terminal

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// RollInterval is how often, at most, the rolling preview is redrawn.
const RollInterval = 100 * time.Millisecond

// RollOptions shapes a Roller.
type RollOptions struct {
	Lines      int  // how many of the last lines stay on screen (--preview N), ≥ 1
	Cols, Rows int  // the terminal's size in characters, 0 when unknown
	Color      bool // dim the header line
}

// Roller is the live view of `--preview N` on a terminal: it keeps the last N lines of the output on
// screen, redrawn in place at most every RollInterval, under a header saying how many earlier lines are
// hidden. Each line is cut to the terminal's width (and autowrap is off while drawing, so a line of wide
// characters cannot take two rows and throw the cursor arithmetic off); when the terminal has fewer rows
// than N, fewer lines are shown. Close erases the view: the final preview is printed from the result.
// Write never blocks on the terminal and never fails. Input is sanitized UTF-8 text.
type Roller struct {
	w     io.Writer
	n     int // lines kept
	width int // characters kept of each line
	color bool

	mu      sync.Mutex
	ring    []string // the last complete lines, oldest at head once full
	head    int
	total   int64  // complete lines seen
	partial []byte // the unterminated last line, cut at width
	dirty   bool

	// drawn and failed are touched only by the drawing goroutine, and by Close once it has stopped.
	drawn   int  // rows on screen
	failed  bool // the terminal refused a write: draw nothing more
	started bool
	stop    chan struct{}
	done    chan struct{}
}

// NewRoller starts a Roller writing to w.
func NewRoller(w io.Writer, o RollOptions) *Roller {
	r := newRoller(w, o)
	r.started = true
	go r.loop()
	return r
}

// newRoller is a Roller that draws only when told (draw), for tests.
func newRoller(w io.Writer, o RollOptions) *Roller {
	n := max(o.Lines, 1)
	if o.Rows > 0 {
		n = max(min(n, o.Rows-2), 1) // room for the header and the cursor's row
	}
	width := LiveLineMax
	if o.Cols > 0 {
		width = max(o.Cols-1, 1)
	}
	return &Roller{w: w, n: n, width: width, color: o.Color, stop: make(chan struct{}), done: make(chan struct{})}
}

// Write takes in output; it always reports len(p), nil.
func (r *Roller) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		nl := bytes.IndexByte(p, '\n')
		seg := p
		if nl >= 0 {
			seg = p[:nl]
		}
		if room := r.width - utf8.RuneCount(r.partial); room > 0 {
			keep, _ := prefixChars(seg, room)
			r.partial = append(r.partial, seg[:keep]...)
		}
		r.dirty = true
		if nl < 0 {
			break
		}
		r.push(string(r.partial))
		r.partial = r.partial[:0]
		p = p[nl+1:]
	}
	return n, nil
}

func (r *Roller) push(line string) {
	r.total++
	if len(r.ring) < r.n {
		r.ring = append(r.ring, line)
		return
	}
	r.ring[r.head] = line
	r.head = (r.head + 1) % r.n
}

// frame is the text that replaces what is on screen, and how many rows it takes.
func (r *Roller) frame() (string, int) {
	r.mu.Lock()
	lines := make([]string, 0, r.n+1)
	lines = append(lines, r.ring[r.head:]...)
	lines = append(lines, r.ring[:r.head]...)
	if len(r.partial) > 0 {
		lines = append(lines, string(r.partial))
	}
	hidden := r.total - int64(len(r.ring))
	if over := len(lines) - r.n; over > 0 {
		lines = lines[over:]
		hidden += int64(over)
	}
	r.dirty = false
	r.mu.Unlock()

	var b strings.Builder
	b.WriteString(r.erase())
	b.WriteString("\x1b[?7l") // autowrap off: a row never spills onto the next
	rows := 0
	if hidden > 0 {
		header := fmt.Sprintf("[%d earlier lines hidden]", hidden)
		if r.color {
			header = "\x1b[2m" + header + "\x1b[0m"
		}
		b.WriteString(header + "\n")
		rows++
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
		rows++
	}
	b.WriteString("\x1b[?7h")
	return b.String(), rows
}

// erase moves the cursor to the first row drawn and clears from there to the end of the screen.
func (r *Roller) erase() string {
	if r.drawn == 0 {
		return ""
	}
	return fmt.Sprintf("\r\x1b[%dA\x1b[J", r.drawn)
}

func (r *Roller) loop() {
	defer close(r.done)
	tick := time.NewTicker(RollInterval)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
			r.draw()
		}
	}
}

// draw redraws the view if the output changed since the last frame.
func (r *Roller) draw() {
	r.mu.Lock()
	dirty := r.dirty
	r.mu.Unlock()
	if !dirty || r.failed {
		return
	}
	f, rows := r.frame()
	if _, err := io.WriteString(r.w, f); err != nil {
		r.failed = true // a closed terminal: keep consuming, draw nothing
		return
	}
	r.drawn = rows
}

// Close stops the redrawing and erases the view; it reports whether there was anything to erase (the
// cursor is then where the view started, at the start of a line).
func (r *Roller) Close() bool {
	if r.started {
		close(r.stop)
		<-r.done
		r.started = false
	}
	if r.drawn == 0 || r.failed {
		return false
	}
	_, _ = io.WriteString(r.w, r.erase())
	r.drawn = 0
	return true
}
