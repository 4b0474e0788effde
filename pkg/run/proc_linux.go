package run

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sysProcAttr starts the shell in a new session (which is also a new process group whose id is the
// shell's pid, with no controlling terminal) and asks the kernel to SIGKILL it if agentbash dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// markInheritedCloseOnExec marks every descriptor from 3 up close-on-exec: with close_range(2) and
// CLOSE_RANGE_CLOEXEC (Linux 5.11), else one by one from /proc/self/fd.
func markInheritedCloseOnExec() {
	if unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	markEachCloseOnExec("/proc/self/fd")
}

// memFile returns an in-memory file (memfd_create(2)) that holds data, open for reading at offset 0 and
// close-on-exec (a child gets it only through ExtraFiles). It needs no file system and no $TMPDIR.
func memFile(name, data string) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.WriteString(data); err != nil {
		f.Close()
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("seek %s: %w", name, err)
	}
	return f, nil
}

// becomeSubreaper makes orphaned descendants (setsid, nohup, double forks) reparent to this process
// instead of init, so they can be found and killed (reference §3.7). Failure only weakens that guarantee.
func becomeSubreaper() {
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// descendants returns the live descendants of this process and, separately, those that are zombies.
//
// It reads the parent of every process from /proc/PID/stat and walks the tree down from this process,
// through zombies too. /proc/PID/task/*/children is cheaper but the kernel documents it as unreliable
// while children are created or exit, and a re-forking daemon lives exactly in that window; a process's
// stat line is consistent, and its parent is either still there (perhaps as a zombie) or it was already
// reparented to us (we are the subreaper).
func descendants() (live, zombies []int) {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, nil
	}
	kids := map[int][]int{}
	state := map[int]byte{}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		ppid, st, ok := procStat(pid)
		if !ok {
			continue
		}
		kids[ppid] = append(kids[ppid], pid)
		state[pid] = st
	}
	queue := append([]int(nil), kids[os.Getpid()]...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if st := state[pid]; st == 'Z' || st == 'X' {
			zombies = append(zombies, pid)
		} else {
			live = append(live, pid)
		}
		queue = append(queue, kids[pid]...)
	}
	return live, zombies
}

// procStat returns the parent pid and state letter of pid from /proc/PID/stat.
func procStat(pid int) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')') // the command name may hold spaces and parentheses
	if i < 0 || i+2 >= len(b) {
		return 0, 0, false
	}
	fields := bytes.Fields(b[i+2:])
	if len(fields) < 2 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(string(fields[1]))
	return ppid, fields[0][0], err == nil
}

// reap collects the status of the given zombies that are our children (orphans reparented to us). Only
// pids we found are waited for, never -1, and never the shell, whose status os/exec's Wait collects.
func reap(pids []int, shell int) {
	for _, p := range pids {
		if p == shell {
			continue
		}
		var ws unix.WaitStatus
		_, _ = unix.Wait4(p, &ws, unix.WNOHANG, nil)
	}
}

// reserveThreads makes the Go runtime start spare OS threads while it still can. A fork bomb that
// exhausts the user's process limit (RLIMIT_NPROC counts threads) would otherwise make the runtime's
// thread creation fail in the middle of the kill, which aborts agentbash and leaves the bomb running.
// Root and unlimited users skip this (the limit does not bind).
func reserveThreads() {
	var lim unix.Rlimit
	if os.Geteuid() == 0 || unix.Getrlimit(unix.RLIMIT_NPROC, &lim) != nil || lim.Cur == unix.RLIM_INFINITY {
		return
	}
	spareThreads(8)
}

// spareThreads has the runtime hold n more OS threads, idle, for later. Each of n goroutines locks itself
// to its thread and waits until all are locked, so no two share one; once they unlock, the threads stay
// with the runtime, idle, for reuse. A locked goroutine that waits hands its processor on at once, so the
// rest of the process runs meanwhile. (Goroutines blocked in a raw read, with a 5 ms sleep to let the
// runtime's monitor take their processors back, held up the run's notice of the command's end: 7 ms
// more for a sandboxed run as uid 65534; docs/benchmarks.md, "issue 23: the sandbox as uid 65534".)
func spareThreads(n int) {
	var locked sync.WaitGroup
	locked.Add(n)
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			runtime.LockOSThread()
			locked.Done()
			<-release
			runtime.UnlockOSThread() // not exited while locked: that would end the thread
		})
	}
	locked.Wait()
	close(release)
	wg.Wait()
}

// hasChildren reports whether this process has any child left: one waitid(P_ALL, WNOHANG|WNOWAIT), which
// fails with ECHILD when there is none and reaps nothing. It spares the full scan of descendants after a
// command that left nothing behind. (Every descendant that outlived its parent was reparented to us, the
// subreaper, so no children means no descendants.)
func hasChildren() bool {
	return !Childless()
}

// Childless reports whether this process certainly has no child, running or a zombie (Linux: waitid
// answers ECHILD; elsewhere it cannot tell and says false). In a subreaper ([BecomeSubreaper]) no child
// means no descendant at all. A supervisor asks before it serves another run.
func Childless() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return errors.Is(err, unix.ECHILD)
}

// outputPipe is the pipe of a command's output, grown to pipeBytes (F_SETPIPE_SZ; a refusal — a lower
// /proc/sys/fs/pipe-max-size, the user's pipe quota — keeps the default): its read end on the
// runtime's poller, its write end not. Only the shell writes to it (os/exec hands it over and the run
// closes it here once the shell started), so a poller registration of it would be undone at once: os.Pipe
// registers both ends and os/exec's Fd makes the write end blocking again, seven system calls more on
// every run's path than this.
func outputPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	if err := unix.SetNonblock(p[0], true); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	_, _ = unix.FcntlInt(uintptr(p[0]), unix.F_SETPIPE_SZ, pipeBytes)
	// os.NewFile puts a non-blocking descriptor on the poller, and leaves a blocking one off it.
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}

// pipeHasData reports whether bytes wait to be read in the pipe f (FIONREAD, which Linux names TIOCINQ).
func pipeHasData(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	_ = rc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
	return n > 0
}

// watchExit reaps cmd's process once it ended and sends its status (cmd.ProcessState) on the channel
// returned. The wait is the runtime's poller on a pidfd, readable once the process ended, rather than a
// thread blocked in wait: a thread in a blocking system call holds its processor, which keeps the
// runtime's monitor thread waking every 20 µs for as long as the command runs (beside a short command on
// two cores that slowed it by a fifth). Without pidfds (Linux before 5.3) it is cmd.Wait on a goroutine.
func watchExit(cmd *exec.Cmd) <-chan *os.ProcessState {
	exited := make(chan *os.ProcessState, 1)
	fd, err := unix.PidfdOpen(cmd.Process.Pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		go func() {
			_ = cmd.Wait() // the status is in ProcessState; Wait has no copy goroutines to wait for
			exited <- cmd.ProcessState
		}()
		return exited
	}
	pidfd := os.NewFile(uintptr(fd), "pidfd") // non-blocking: on the poller
	go func() {
		defer pidfd.Close()
		if rc, err := pidfd.SyscallConn(); err == nil {
			_ = rc.Read(func(fd uintptr) bool {
				var info unix.Siginfo
				err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
				return err != nil || info.Signo != 0 // ended (a zombie now), or nothing to wait for
			})
		}
		_ = cmd.Wait()
		exited <- cmd.ProcessState
	}()
	return exited
}

// ended reports whether child pid has ended: a zombie (waitid with WNOWAIT, which reaps nothing), or
// already collected (ECHILD: no longer a child; the caller's watchExit reaped it).
func ended(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return errors.Is(err, unix.ECHILD) || err == nil && info.Signo != 0
}

// onMainThread reports whether the calling goroutine runs on the process's main thread (call it locked
// to its thread).
func onMainThread() bool { return unix.Gettid() == unix.Getpid() }

// Inherited is what the commands a process starts inherit from it that another process of the same
// user can change from outside: the resource limits (prlimit), and of the thread that starts them (the
// main thread, whose id is the process's) the nice value (renice), the CPU affinity (taskset), the
// scheduling policy (chrt) and the I/O priority (ionice); and the OOM score adjustment and the cgroup.
// A command can do that to its supervisor, its parent, and every later command of that supervisor
// would run so; a supervisor compares them before it serves another run. Values compare with ==.
type Inherited struct {
	limits               [unix.RLIMIT_RTTIME + 1]unix.Rlimit
	nice, policy, ioprio int
	cpus                 unix.CPUSet
	oomScoreAdj, cgroup  string
}

// ReadInherited reads this process's Inherited values; one it cannot read stays zero. A supervisor reads
// them after every run, so the two files are opened once and read again from their start each time (a
// file of /proc is made anew at each read from offset 0), and nothing here waits: the system calls are
// the raw ones, which the runtime does not account as blocking.
func ReadInherited() Inherited {
	var in Inherited
	for r := range in.limits {
		_ = unix.Getrlimit(r, &in.limits[r])
	}
	pid := os.Getpid()
	nice, _, _ := unix.RawSyscall(unix.SYS_GETPRIORITY, unix.PRIO_PROCESS, uintptr(pid), 0)
	_ = unix.SchedGetaffinity(pid, &in.cpus)
	policy, _, _ := unix.RawSyscall(unix.SYS_SCHED_GETSCHEDULER, uintptr(pid), 0, 0)
	const ioprioWhoProcess = 1 // IOPRIO_WHO_PROCESS: a thread, by its id
	ioprio, _, _ := unix.RawSyscall(unix.SYS_IOPRIO_GET, ioprioWhoProcess, uintptr(pid), 0)
	in.nice, in.policy, in.ioprio = int(nice), int(policy), int(ioprio)
	procFiles.once.Do(func() {
		procFiles.oomScoreAdj = openProcFile("/proc/self/oom_score_adj")
		procFiles.cgroup = openProcFile("/proc/self/cgroup")
	})
	in.oomScoreAdj = procFiles.oomScoreAdj.read()
	in.cgroup = procFiles.cgroup.read()
	return in
}

// procFiles are the files of /proc that ReadInherited reads, open for the life of the process
// (close-on-exec: no command gets them).
var procFiles struct {
	once                sync.Once
	oomScoreAdj, cgroup procFile
}

// procFile is a file of /proc open for reading, or -1 when it could not be opened.
type procFile int

func openProcFile(path string) procFile {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return procFile(fd)
}

// read returns the whole content of f, "" when it cannot be read.
func (f procFile) read() string {
	if f < 0 {
		return ""
	}
	buf := make([]byte, 512)
	for {
		n, err := rawPread(int(f), buf, 0)
		if err != nil {
			return ""
		}
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf)) // it may not have been all: again, whole, into a larger buffer
	}
}

// rawPread is pread(2) at offset off without the runtime's accounting of a blocking call (a file of
// /proc is made in memory).
func rawPread(fd int, p []byte, off int64) (int, error) {
	n, _, errno := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), uintptr(off), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
