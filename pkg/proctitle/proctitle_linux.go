package proctitle

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"unsafe"
)

// set overwrites the argument area [arg_start, arg_end) that the kernel reads /proc/self/cmdline from:
// the title, a NUL, NULs up to the end, and a non-NUL last byte. A last byte that is not NUL tells the
// kernel the area was rewritten (the setproctitle convention): it then returns the area up to the first
// NUL, so readers see exactly the title, with no trailing empty arguments.
func set(title string) error {
	if len(os.Args) == 0 || os.Args[0] == "" {
		return errors.New("proctitle: no program name in os.Args")
	}
	start, end, err := argArea()
	if err != nil {
		return err
	}
	base := unsafe.StringData(os.Args[0])
	if uintptr(unsafe.Pointer(base)) != start || end <= start {
		return fmt.Errorf("proctitle: os.Args[0] is not at the start of the argument area (%#x, kernel says %#x-%#x)",
			uintptr(unsafe.Pointer(base)), start, end)
	}
	os.Args = Clone(os.Args)
	area := unsafe.Slice(base, end-start)
	n := copy(area, title)
	if n == len(area) {
		n-- // keep a terminating NUL
	}
	clear(area[n:])
	if n+1 < len(area) {
		area[len(area)-1] = ' '
	}
	return nil
}

// argArea returns arg_start and arg_end, fields 48 and 49 of /proc/self/stat (proc(5), Linux 3.5+).
func argArea() (start, end uintptr, err error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("proctitle: %w", err)
	}
	i := bytes.LastIndexByte(b, ')') // the command name may hold spaces and parentheses
	if i < 0 {
		return 0, 0, errors.New("proctitle: malformed /proc/self/stat")
	}
	fields := bytes.Fields(b[i+1:]) // fields[0] is field 3, the state
	const argStart = 48 - 3
	if len(fields) <= argStart+1 {
		return 0, 0, errors.New("proctitle: /proc/self/stat has no arg_start/arg_end (Linux before 3.5)")
	}
	s, err1 := strconv.ParseUint(string(fields[argStart]), 10, 64)
	e, err2 := strconv.ParseUint(string(fields[argStart+1]), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("proctitle: /proc/self/stat: %w", err)
	}
	return uintptr(s), uintptr(e), nil
}
