package proctitle

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"unsafe"
)

// set overwrites the argument area [arg_start, arg_end) that the kernel reads /proc/self/cmdline from
// with title (NUL-separated arguments), then NUL bytes to the end. The area is found through os.Args,
// whose strings point into it (os.Args[0] may have been replaced by a part of itself, as testscript
// does); every one of them must lie inside it.
func set(title string) error {
	start, end, err := argArea()
	if err != nil {
		return err
	}
	var base *byte
	for _, a := range os.Args {
		if a == "" {
			continue
		}
		p := uintptr(unsafe.Pointer(unsafe.StringData(a)))
		if p < start || p+uintptr(len(a)) > end {
			return fmt.Errorf("proctitle: os.Args does not point into the argument area %#x-%#x", start, end)
		}
		if base == nil {
			base = (*byte)(unsafe.Add(unsafe.Pointer(unsafe.StringData(a)), -int(p-start)))
		}
	}
	if base == nil {
		return errors.New("proctitle: os.Args is empty")
	}
	os.Args = Clone(os.Args)
	area := unsafe.Slice(base, end-start)
	n := copy(area[:len(area)-1], title) // the last byte stays NUL: the kernel then reads the area as it is
	clear(area[n:])
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
