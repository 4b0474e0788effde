package tasks

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/agentbash/agentbash/pkg/listing"
	"github.com/agentbash/agentbash/pkg/texts"
)

// Processes is "1 process" or "N processes" (the texts of a task's leftover processes).
func Processes(n int) string {
	if n == 1 {
		return "1 process"
	}
	return fmt.Sprintf("%d processes", n)
}

// Recent is how long a listing without all shows a task after it ended (reference §8).
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
	// LeftoverCount is how many processes the task started still run after its shell ended (0 while the
	// shell runs): the task owns them until they are gone (`kill` ends them).
	LeftoverCount int `json:"leftoverCount"`
}

// Rows lists recs as of now: the running tasks, those whose leftover processes run, and those that ended
// within [Recent], or every one when all is set. The result is never nil, so it encodes as [] when empty.
func Rows(recs []Record, all bool, now time.Time) []Row {
	rows := []Row{}
	for _, rec := range recs {
		if !all && !rec.Running() && rec.Leftovers == 0 && rec.EndedAt != nil && now.Sub(*rec.EndedAt) > Recent {
			continue
		}
		r := Result(rec, false)
		row := Row{TaskID: rec.TaskID, Status: r.Details.Status, Pid: rec.Pid, Command: rec.Command,
			Cwd: rec.Cwd, StartedAt: r.Details.StartedAt, EndedAt: r.Details.EndedAt}
		if !rec.Running() {
			row.ExitCode, row.LeftoverCount = r.Details.ExitCode, rec.Leftovers
		}
		rows = append(rows, row)
	}
	return rows
}

// Table writes rows as `agentbash tasks` and MCP's bash_tasks show them: a header, then one line a task
// with its id, status (with the number of processes still running when its shell ended before them:
// `signaled (1 process running)`), pid, age as of now (45s, 12m, 5h, 3d) and its command on one line,
// cut at 80 characters; columns aligned with spaces.
func Table(w io.Writer, rows []Row, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tPID\tAGE\tCOMMAND")
	for _, row := range rows {
		started, _ := time.Parse(time.RFC3339Nano, row.StartedAt)
		status := row.Status
		if row.LeftoverCount > 0 {
			status = fmt.Sprintf(texts.TaskLeftoversRunning, status, Processes(row.LeftoverCount))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", row.TaskID, status, row.Pid, listing.Age(now.Sub(started)),
			listing.OneLine(row.Command, 80))
	}
	return tw.Flush()
}
