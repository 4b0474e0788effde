package cmd

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/agentbash/agentbash/pkg/config"
	"github.com/agentbash/agentbash/pkg/console"
	"github.com/agentbash/agentbash/pkg/screen"
	"github.com/agentbash/agentbash/pkg/service"
)

func newInputCmd(ios IO) *cobra.Command {
	var keys []string
	var eof, raw bool
	var wait float64
	var cols, rows int
	c := &cobra.Command{
		Use:   "input ID [TEXT]",
		Short: "Type into a background task started with --stdin-pipe or --tty, and print its answer",
		Long: `Write TEXT, then the keys of --keys, then with --eof the end of input, to task ID's input (a task
started with --stdin-pipe or --tty), wait up to --wait SECONDS for its output to settle (it grew, then
stayed quiet for 0.1 s), and print what it printed since the last read, as agentbash output does, with the
screen of a terminal (--tty) in details.screen, and in the text under "--- screen ---" when it shows a
full-screen program or a prompt.

TEXT takes C-style escapes: \n, \r, \t, \e (Esc), \\ and \xHH (a byte); --raw writes it as given. In a
terminal, Enter is \r (or --keys Enter). --keys names keys, comma-separated: Enter, Tab, S-Tab, Esc,
Backspace, Space, Up, Down, Left, Right, Home, End, PageUp, PageDown, Insert, Delete, F1-F12, C-a … C-z,
M-x (Alt), Comma, or any single character; they are sent as the terminal's current modes want them.
--eof closes a pipe, or sends a terminal's EOF character (C-d). --cols and --rows resize a terminal.

Exit status: 0 when the input was written; 1 when the task ended, has no input, is unknown, or refused it
(more than 1 MiB of input waiting that the command has not read, an unknown key); 2 usage error.`,
		Example: `  agentbash run --tty --yield 2 'python3 -q'
  agentbash input 7 '6*7\r'
  agentbash input 7 --keys C-d
  agentbash start --stdin-pipe 'python3 -q -i'
  agentbash input 8 'print(6*7)\n'
  agentbash input 8 --eof`,
		Args: usageArgs(cobra.RangeArgs(1, 2)),
		RunE: func(c *cobra.Command, args []string) error {
			id, err := taskID(args[0])
			if err != nil {
				return taskError(c, ios, args[0], err)
			}
			if wait < 0 || wait != wait {
				return usageError{err: errors.New("--wait takes a number of seconds ≥ 0"), cmd: c.CommandPath()}
			}
			in := console.Request{EOF: eof, Cols: cols, Rows: rows}
			if len(args) == 2 {
				in.Text = []byte(args[1])
				if !raw {
					if in.Text, err = unescape(args[1]); err != nil {
						return usageError{err: fmt.Errorf("TEXT: %w (--raw writes it as given)", err), cmd: c.CommandPath()}
					}
				}
			}
			for _, k := range keys { // --keys a --keys Enter is a then Enter
				in.Keys = append(in.Keys, screen.ParseKeys(k)...)
			}
			if c.Flags().Changed("keys") && len(in.Keys) == 0 {
				return usageError{err: errors.New("--keys: no key named"), cmd: c.CommandPath()}
			}
			if err := checkSizeFlags(c.Flags()); err != nil {
				return usageError{err: err, cmd: c.CommandPath()}
			}
			svc, text, err := taskEnv(c, ios)
			if err != nil {
				return err
			}
			r, err := svc.Input(c.Context(), id, in, wait)
			if err != nil {
				return taskError(c, ios, id, err)
			}
			if printTask(ios, r, text) != nil {
				return exitError{code: 1}
			}
			return nil
		},
	}
	c.Flags().StringArrayVar(&keys, "keys", nil, "send the named `KEYS`, comma-separated (Enter,Up,C-c,…); repeatable, in order")
	c.Flags().BoolVar(&eof, "eof", false, "end the input: close the pipe, or send the terminal's EOF (C-d)")
	c.Flags().BoolVar(&raw, "raw", false, "write TEXT as given, without escapes")
	c.Flags().Float64Var(&wait, "wait", service.DefaultInputWait, "wait up to `SECONDS` for the output to settle before reading")
	c.Flags().IntVar(&cols, "cols", 0, "resize the task's terminal to `COLUMNS` (2 to 1000)")
	c.Flags().IntVar(&rows, "rows", 0, "resize the task's terminal to `ROWS` (2 to 1000)")
	c.Flags().Int("max-bytes", config.DefaultMaxBytes, "show at most `BYTES` of what arrived (the newest part)")
	taskFlags(c)
	dashedID(c, malformedTask(ios))
	return c
}

// unescape turns the C-style escapes of input TEXT into bytes: \n \r \t \e \a \b \0 \\ and \xHH; a backslash
// before any other character stays as written. \x needs two hex digits.
func unescape(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			out = append(out, s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'e':
			out = append(out, 0x1b)
		case 'a':
			out = append(out, 0x07)
		case 'b':
			out = append(out, 0x08)
		case '0':
			out = append(out, 0)
		case '\\':
			out = append(out, '\\')
		case 'x':
			if i+2 >= len(s) {
				return nil, fmt.Errorf(`\x at byte %d needs two hex digits`, i-1)
			}
			b, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return nil, fmt.Errorf(`\x%s at byte %d: want two hex digits`, s[i+1:i+3], i-1)
			}
			out = append(out, byte(b))
			i += 2
		default:
			out = append(out, '\\', s[i])
		}
	}
	return out, nil
}
