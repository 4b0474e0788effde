// Package console is the supervisor's input end of an interactive command (docs/reference.md §14): a pipe
// the command reads as its stdin, or a pseudo-terminal that is its stdin, stdout, stderr and controlling
// terminal, with a headless terminal emulator (pkg/screen) that makes the screen a person would see.
//
// A [Console] is opened before the shell starts ([Open]) and closed after its output was drained. Input
// is queued for one writer goroutine, bounded by [MaxPending]; the socket of a task ([Listen], [Send])
// reaches the console of a detached supervisor from any agentbash process (docs/architecture.md,
// "Interactive").
package console

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/agentbash/agentbash/pkg/screen"
)

// Options is how a command is interactive: a stdin pipe, or with TTY a pseudo-terminal of Cols×Rows. It
// travels in run.Spec and request.Resolved as it is.
type Options struct {
	TTY  bool `json:"tty,omitempty"`
	Cols int  `json:"cols,omitempty"` // tty: columns, screen.MinSize to screen.MaxSize; 0 is screen.DefaultCols
	Rows int  `json:"rows,omitempty"` // tty: rows, screen.MinSize to screen.MaxSize; 0 is screen.DefaultRows
}

// MaxCells bounds a terminal's size (docs/reference.md §14) beside pkg/screen's per side (screen.MinSize to
// screen.MaxSize, screen.DefaultCols×screen.DefaultRows unless asked): the emulator's screens take 224 bytes
// a cell, and the supervisor stays within its memory budget (§12).
const MaxCells = 30000

// The modes of an input end, as a task record names them (`interactive`).
const (
	ModePipe = "pipe"
	ModeTTY  = "tty"
)

// Mode names the input of o: ModeTTY or ModePipe.
func (o Options) Mode() string {
	if o.TTY {
		return ModeTTY
	}
	return ModePipe
}

// Size is o's terminal size with the defaults filled in.
func (o Options) Size() (cols, rows int) {
	return cmp.Or(o.Cols, screen.DefaultCols), cmp.Or(o.Rows, screen.DefaultRows)
}

// Check refuses a size outside MinSize to MaxSize, or a size without a terminal. A nil o is no input end.
func (o *Options) Check() error {
	if o == nil {
		return nil
	}
	if !o.TTY && (o.Cols != 0 || o.Rows != 0) {
		return errors.New("cols, rows: a size needs a terminal (tty)")
	}
	return CheckSize(o.Cols, o.Rows)
}

// CheckSize refuses a number of columns or rows outside screen.MinSize to screen.MaxSize (0 means not given:
// the default), and a size of more than MaxCells cells.
func CheckSize(cols, rows int) error {
	var errs []error
	for _, f := range []struct {
		name string
		n    int
	}{{"cols", cols}, {"rows", rows}} {
		if f.n != 0 && (f.n < screen.MinSize || f.n > screen.MaxSize) {
			errs = append(errs, fmt.Errorf("%s: want %d to %d, got %d", f.name, screen.MinSize, screen.MaxSize, f.n))
		}
	}
	if errs == nil {
		return checkCells(Options{Cols: cols, Rows: rows}.Size())
	}
	return errors.Join(errs...)
}

// checkCells refuses a terminal of more than MaxCells cells.
func checkCells(cols, rows int) error {
	if cols*rows > MaxCells {
		return fmt.Errorf("cols × rows: at most %d cells (150×200, 750×40), got %d×%d: a larger screen would not fit "+
			"the supervisor's memory bound", MaxCells, cols, rows)
	}
	return nil
}

// terminalHeap is the soft limit on the Go heap of a process with a terminal open (see Open), bytes.
const terminalHeap = 20 << 20

// MaxPending is the most input that waits in the supervisor for the command to read it, bytes (what the
// kernel's pipe or terminal holds is not counted). Input past it is refused whole ([ErrFull]).
const MaxPending = 1 << 20

// The errors of [Console.Input] and [Console.Resize]; [Send] gives them back by their text.
var (
	ErrFull   = errors.New("the command has not read the input that waits for it (1 MiB): nothing was written")
	ErrClosed = errors.New("the command's input was closed (--eof): nothing was written")
	ErrEnded  = errors.New("the command has ended: nothing was written")
	ErrNoTTY  = errors.New("the command has no terminal (started with --stdin-pipe, not --tty): it cannot be resized")
)

// Console is the supervisor's end of one interactive command's input. Its methods are safe for concurrent
// use.
type Console struct {
	opts Options
	in   *os.File // what input is written to: the pipe's write end, or the terminal's master
	// The files the shell gets, held here until it started (Started closes them): the pipe's read end, or
	// the terminal's end (its stdin, stdout and stderr).
	child *os.File
	term  *screen.Terminal // tty only

	mu      sync.Mutex
	wake    *sync.Cond
	queue   []byte // input not yet written
	writing int    // bytes being written now (still pending)
	eof     bool   // --eof asked: close (pipe) once the queue is written
	ended   bool   // Close called
	werr    error  // the write that failed (the command closed its input)
	stopped chan struct{}
}

// Open makes the input end o asks for: a pipe, or a pseudo-terminal of o's size with its emulator. The
// shell gets [Console.Stdin] (and in tty mode [Console.Terminal] as stdout and stderr, and as its
// controlling terminal); the caller closes the console once the shell's output was drained.
func Open(o Options) (*Console, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	c := &Console{opts: o, stopped: make(chan struct{})}
	c.wake = sync.NewCond(&c.mu)
	if !o.TTY {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("create the input pipe: %w", err)
		}
		c.in, c.child = w, r
	} else {
		master, tty, err := openTerminal()
		if err != nil {
			return nil, err
		}
		cols, rows := o.Size()
		if err := setSize(master, cols, rows); err != nil {
			master.Close()
			tty.Close()
			return nil, fmt.Errorf("size the pseudo-terminal: %w", err)
		}
		c.in, c.child = master, tty
		c.term = screen.New(cols, rows, c.reply)
		// The emulator makes much garbage (x/vt allocates some 100 bytes per byte it reads, and a resize makes
		// new screens): a soft limit on the heap keeps the supervisor within its budget (docs/reference.md
		// §12) by collecting sooner, instead of letting the heap double before each collection.
		if limit := debug.SetMemoryLimit(-1); limit > terminalHeap {
			debug.SetMemoryLimit(terminalHeap)
		}
	}
	go c.write()
	return c, nil
}

// TTY reports whether the command has a terminal.
func (c *Console) TTY() bool { return c.opts.TTY }

// Stdin is the shell's stdin: the pipe's read end, or the terminal.
func (c *Console) Stdin() *os.File { return c.child }

// Terminal is the terminal the shell gets as stdout, stderr and controlling terminal; nil in pipe mode.
func (c *Console) Terminal() *os.File {
	if c.opts.TTY {
		return c.child
	}
	return nil
}

// Output returns a new descriptor of the terminal's master to read the command's output from (the
// caller closes it; reading it ends with EIO once no process holds the terminal). Pipe mode has none.
func (c *Console) Output() (*os.File, error) {
	if !c.opts.TTY {
		return nil, errors.New("console: no terminal")
	}
	return pollable(c.in, "pty-master")
}

// openTerminal opens a pseudo-terminal: its master on the runtime's poller (reads and writes take deadlines,
// and a blocked one holds no thread), and its terminal end, blocking, for the shell.
func openTerminal() (master, tty *os.File, err error) {
	m, tty, err := pty.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("open a pseudo-terminal: %w", err)
	}
	defer m.Close() // pty.Open leaves it blocking (it took its descriptor): the copy is the master
	if master, err = pollable(m, "pty-master"); err != nil {
		tty.Close()
		return nil, nil, err
	}
	return master, tty, nil
}

// pollable returns a new descriptor of f's open file, non-blocking and on the runtime's poller. It never
// calls f.Fd(), which would make f blocking (and its deadlines fail).
func pollable(f *os.File, name string) (*os.File, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	nfd := -1
	if cerr := rc.Control(func(fd uintptr) { nfd, err = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); cerr != nil {
		err = cerr
	}
	if err == nil {
		err = unix.SetNonblock(nfd, true)
	}
	if err != nil {
		if nfd >= 0 {
			unix.Close(nfd)
		}
		return nil, fmt.Errorf("duplicate the terminal's master: %w", err)
	}
	return os.NewFile(uintptr(nfd), name), nil
}

// setSize sets the size of the terminal whose master is f (TIOCSWINSZ), without making f blocking.
func setSize(f *os.File, cols, rows int) error {
	return control(f, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
	})
}

// control runs op on f's descriptor, keeping f non-blocking.
func control(f *os.File, op func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	if cerr := rc.Control(func(fd uintptr) { err = op(int(fd)) }); cerr != nil {
		return cerr
	}
	return err
}

// Started closes this process's copies of the shell's ends, once the shell has them: then the pipe's
// reader, or the terminal, is the command's alone (Stdin and Terminal are nil from here on).
func (c *Console) Started() {
	if c.child != nil {
		c.child.Close()
		c.child = nil
	}
}

// Write feeds the command's output to the emulator (tty mode; pipe mode ignores it). It never fails and
// never waits for the emulator.
func (c *Console) Write(p []byte) (int, error) {
	if c.term != nil {
		_, _ = c.term.Write(p)
	}
	return len(p), nil
}

// Input queues text, then keys (names [screen.Keys] knows, encoded for the terminal's current modes; in
// pipe mode Enter is "\n"), then with eof the end of input (pipe: the write end is closed once the queue
// is written; tty: the terminal's EOF character, VEOF, is sent). It is all or nothing: ErrFull when it
// would make more than MaxPending wait, ErrClosed after an eof in pipe mode, ErrEnded once the command
// ended, the write's error when the command closed its input, or the keys' error naming the known ones.
func (c *Console) Input(text []byte, keys []string, eof bool) error {
	var encoded []byte
	if len(keys) > 0 {
		mode := screen.KeyMode{Pipe: true}
		if c.term != nil {
			mode = c.term.KeyMode()
		}
		var err error
		if encoded, err = screen.Keys(keys, mode); err != nil {
			return err
		}
	}
	if eof && c.opts.TTY {
		encoded = append(encoded, c.eofChar())
		eof = false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.ended:
		return ErrEnded
	case c.eof:
		return ErrClosed
	case c.werr != nil:
		return fmt.Errorf("the command closed its input: %w", c.werr)
	case len(c.queue)+c.writing+len(text)+len(encoded) > MaxPending:
		return ErrFull
	}
	c.queue = append(append(c.queue, text...), encoded...)
	c.eof = eof
	c.wake.Signal()
	return nil
}

// Pending is how many bytes of input wait for the command to read them.
func (c *Console) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue) + c.writing
}

// reply queues the emulator's answer to a terminal query; dropped when input is full or ended.
func (c *Console) reply(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended || c.werr != nil || len(c.queue)+c.writing+len(p) > MaxPending {
		return
	}
	c.queue = append(c.queue, p...)
	c.wake.Signal()
}

// eofChar is the terminal's EOF character (VEOF, C-d unless a program changed it).
func (c *Console) eofChar() byte {
	eof := byte(0x04)
	_ = control(c.in, func(fd int) error {
		t, err := unix.IoctlGetTermios(fd, getTermios)
		if err == nil && t.Cc[unix.VEOF] != 0 {
			eof = t.Cc[unix.VEOF]
		}
		return err
	})
	return eof
}

// Resize sets the terminal's size and the emulator's: the command gets SIGWINCH.
func (c *Console) Resize(cols, rows int) error {
	if !c.opts.TTY {
		return ErrNoTTY
	}
	if err := CheckSize(cols, rows); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return ErrEnded
	}
	oc, or := c.opts.Size()
	cols, rows = cmp.Or(cols, oc), cmp.Or(rows, or)
	if err := checkCells(cols, rows); err != nil {
		return err
	}
	if err := setSize(c.in, cols, rows); err != nil {
		return fmt.Errorf("resize the terminal: %w", err)
	}
	c.opts.Cols, c.opts.Rows = cols, rows
	c.term.Resize(cols, rows)
	return nil
}

// Screen is what the terminal shows now, after all the output the console was given; nil in pipe mode.
func (c *Console) Screen() *screen.Screen {
	if c.term == nil {
		return nil
	}
	s := c.term.Snapshot()
	return &s
}

// Hangup closes the input end at once, as a terminal that went away: the command's reads of a pipe see
// EOF, and a terminal's processes get SIGHUP and EIO. For a drain that stopped reading while the command
// runs (its writes to a terminal would otherwise block).
func (c *Console) Hangup() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stop()
}

// Close ends the console once the command's output was drained: queued input is dropped, the input end is
// closed, the emulator stops (Screen still answers). It returns at once; later calls do nothing.
func (c *Console) Close() {
	c.mu.Lock()
	c.stop()
	c.mu.Unlock()
	<-c.stopped
	c.Started() // when the shell never started, its ends are still here
	if c.term != nil {
		c.term.Close()
	}
}

// stop marks the console ended and wakes the writer, which closes the input end. c.mu is held.
func (c *Console) stop() {
	if !c.ended {
		c.ended, c.queue = true, nil
		c.wake.Signal()
		// A write blocked on a full pipe or terminal returns once the file is closed.
		_ = c.in.SetWriteDeadline(time.Unix(1, 0))
	}
}

// write is the one writer: it writes the queue to the input end in pieces as the command reads them, and
// ends once the console ends, the pipe's end was written (--eof) or a write failed; closing the input end
// then is its last act (Input says ErrEnded, ErrClosed or the write's error from there on).
func (c *Console) write() {
	defer close(c.stopped)
	defer c.in.Close()
	for {
		c.mu.Lock()
		for len(c.queue) == 0 && !c.ended && !(c.eof && !c.opts.TTY) {
			c.wake.Wait()
		}
		if c.ended || len(c.queue) == 0 { // ended, or eof asked and everything written: the pipe's end
			c.mu.Unlock()
			return
		}
		piece := c.queue[:min(len(c.queue), writePiece)]
		c.queue = c.queue[len(piece):]
		if len(c.queue) == 0 {
			c.queue = nil // let a large queue's memory go
		}
		c.writing = len(piece)
		c.mu.Unlock()
		_, err := c.in.Write(piece)
		c.mu.Lock()
		c.writing = 0
		if err != nil && !c.ended {
			c.werr, c.queue = err, nil
		}
		c.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// writePiece is the most the writer hands the kernel at once: small enough that a refusal (ErrFull) is
// about what really waits, large enough for few calls.
const writePiece = 64 << 10
