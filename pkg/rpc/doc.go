// Package rpc is agentbash's long-lived JSON-lines mode (reference §7.2): requests on one stream, responses,
// update events and task_done events on another, one JSON object per line. Commands run concurrently,
// each a supervised run of a [pipeline.Runner] (reference §11), in arrival order within a session; abort_bash
// is read and acted on while commands run; task requests (start, output, input, kill, wait, tasks) answer
// with the object the matching CLI command prints (reference §8, §14: input types into a task started with
// "stdin": "pipe" or "tty": true and answers with the read that follows).
package rpc
