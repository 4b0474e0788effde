#!/usr/bin/env python3
"""Runs a shell command and reports the peak RSS of every agentbash process it leads to, by role: the
client (`agentbash run`, `start`, `wait`, ...) and the supervisor (`agentbash __supervise`), each process
on its own.

This process becomes the child subreaper of what it starts, so a task's supervisor, which outlives the
`start` that made it, stays its descendant; every 10 ms it reads VmHWM (the kernel's peak resident set)
of each agentbash descendant from /proc, and it waits until all of them have ended.

  rss.py --exe AGENTBASH [--json FILE] COMMAND
"""
import argparse, ctypes, json, os, subprocess, sys, time

PR_SET_CHILD_SUBREAPER = 36


def descendants(root):
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
        except OSError:
            continue
        ppid = int(st[st.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    out, queue = [], list(kids.get(root, []))
    while queue:
        p = queue.pop()
        out.append(p)
        queue.extend(kids.get(p, []))
    return out


def sample(pid, exe):
    """(role, VmHWM KiB) of a process of the binary exe, or None."""
    try:
        if os.readlink(f"/proc/{pid}/exe") != exe:
            return None
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
        with open(f"/proc/{pid}/status") as f:
            hwm = next((int(l.split()[1]) for l in f if l.startswith("VmHWM:")), 0)
    except (OSError, StopIteration):
        return None
    role = "supervisor" if len(argv) > 1 and argv[1] == b"__supervise" else "client"
    return role, hwm


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True, help="the agentbash binary")
    ap.add_argument("--json")
    ap.add_argument("command")
    a = ap.parse_args()
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("rss: cannot become a subreaper")
    me, exe = os.getpid(), os.path.realpath(a.exe)
    peak = {}  # pid -> (role, KiB)
    proc = subprocess.Popen(["sh", "-c", a.command], stdout=subprocess.DEVNULL)
    while True:
        alive = False
        for p in descendants(me):
            s = sample(p, exe)
            if s:
                alive = True
                role, kib = s
                peak[p] = (role, max(kib, peak.get(p, (role, 0))[1]))
        try:  # reap whatever ended (the command, orphans reparented to us)
            while os.waitpid(-1, os.WNOHANG) != (0, 0):
                pass
        except ChildProcessError:
            pass
        if proc.poll() is not None and not alive:
            break
        time.sleep(0.01)
    if proc.returncode != 0:
        sys.exit(f"rss: the command failed with status {proc.returncode}")
    roles = {}
    for role, kib in peak.values():
        roles[role] = max(roles.get(role, 0), kib)
    for role, kib in sorted(roles.items()):
        print(f"{role:12s} peak RSS {kib / 1024:6.1f} MiB")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(roles, f)


if __name__ == "__main__":
    main()
