#!/usr/bin/env python3
"""Drives a long-lived `agentbash rpc` or `agentbash mcp` through N commands, one at a time (each response read
before the next request is written), for bench/rss.py to read the peak RSS of the server and of its supervisors
(docs/reference.md §12: ≤ 16 MiB for an rpc/mcp server that ran 1000 commands). Every command but one is short
(`true`, `echo x`, `cd /`, every other one of rpc's in a session; mcp's all in its connection's default session);
the one in the middle prints 3 GB (`yes 0123456789abcdef | head -c 3000000000`, the artifact at its default cap).
The client is a raw JSON-lines client (the server's memory does not depend on who speaks to it): for mcp, the
initialize handshake, then `tools/call` of `bash`. It fails on any response that is not a success.
With --distinct, `echo x` becomes `x=I` (I the command's number): every such command differs and changes its
session's state, as an agent's commands do, so what a server keeps per distinct command shows.
    bench/serve.py [--distinct] rpc|mcp AGENTBASH [N]       (N default 1000)
"""
import json, subprocess, sys

BIG = "yes 0123456789abcdef | head -c 3000000000"
SHORT = ("true", "echo x", "cd /")


def main():
    args = sys.argv[1:]
    distinct = "--distinct" in args
    args = [a for a in args if a != "--distinct"]
    face, ab = args[0], args[1]
    n = int(args[2]) if len(args) > 2 else 1000
    p = subprocess.Popen([ab, face], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def ask(msg):
        p.stdin.write(json.dumps(msg).encode() + b"\n")
        p.stdin.flush()
        while True:  # skip what is not the answer (rpc's task_done, mcp's notifications)
            line = p.stdout.readline()
            if not line:
                sys.exit(f"serve.py: {face} ended before answering {msg}")
            m = json.loads(line)
            if m.get("id") == msg["id"]:
                return m

    if face == "mcp":
        m = ask({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
        if "result" not in m:
            sys.exit(f"serve.py: initialize: {m}")
        p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    for i in range(1, n + 1):
        command = BIG if i == n // 2 else SHORT[i % len(SHORT)]
        if distinct and command == "echo x":
            command = f"x={i}"
        if face == "rpc":
            req = {"id": i, "type": "bash", "command": command}
            if i % 2:
                req["session"] = "bench"
            m = ask(req)
            details = (m.get("data") or {}).get("details") or {}
        else:
            m = ask({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                     "params": {"name": "bash", "arguments": {"command": command}}})
            details = (m.get("result") or {}).get("structuredContent") or {}
        if details.get("exitCode") != 0:
            sys.exit(f"serve.py: {face} {command!r}: {json.dumps(m)[:500]}")
        if command == BIG:
            total = details["meta"]["truncation"]["totalBytes"]
            if total != 3_000_000_000:
                sys.exit(f"serve.py: {face} {command!r}: totalBytes {total}")
    p.stdin.close()
    if p.wait(30) != 0:
        sys.exit(f"serve.py: {face} exited with status {p.returncode}")
    print(f"{face}: {n} {'distinct ' if distinct else ''}commands, one of 3 GB", file=sys.stderr)


if __name__ == "__main__":
    main()
