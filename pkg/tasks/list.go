package tasks

import "time"

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
