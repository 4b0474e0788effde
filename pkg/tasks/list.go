package tasks

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/agentbash/agentbash/pkg/listing"
)

// Recent is how long a listing without all shows a task after it ended (SPEC §8).
const Recent = 24 * time.Hour

// Row is one task in a listing (`tasks --json`, rpc `tasks`, MCP bash_tasks).
type Row struct {
	TaskID    string `json:"taskId"`
	Status    string `json:"status"`
	Pid       int    `json:"pid"`
	Command   string `json:"command"`
	Cwd       string `json:"cwd"`
	StartedAt string `json:"startedAt"`
	EndedAt   string `json:"endedAt,omitempty"`
	ExitCode  *int   `json:"exitCode,omitempty"`
}

// Rows lists recs as of now: the running tasks and those that ended within [Recent], or every one when
// all is set. The result is never nil, so it encodes as [] when empty.
func Rows(recs []Record, all bool, now time.Time) []Row {
	rows := []Row{}
	for _, rec := range recs {
		if !all && !rec.Running() && rec.EndedAt != nil && now.Sub(*rec.EndedAt) > Recent {
			continue
		}
		r := Result(rec, false)
		row := Row{TaskID: rec.TaskID, Status: r.Details.Status, Pid: rec.Pid, Command: rec.Command,
			Cwd: rec.Cwd, StartedAt: r.Details.StartedAt, EndedAt: r.Details.EndedAt}
		if !rec.Running() {
			row.ExitCode = r.Details.ExitCode
		}
		rows = append(rows, row)
	}
	return rows
}

// Table writes rows as `agentbash tasks` and MCP's bash_tasks show them: a header, then one line a task
// with its id, status, pid, age as of now (45s, 12m, 5h, 3d) and its command on one line, cut at 80
// characters; columns aligned with spaces.
func Table(w io.Writer, rows []Row, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tPID\tAGE\tCOMMAND")
	for _, row := range rows {
		started, _ := time.Parse(time.RFC3339Nano, row.StartedAt)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", row.TaskID, row.Status, row.Pid, listing.Age(now.Sub(started)),
			listing.OneLine(row.Command, 80))
	}
	return tw.Flush()
}
