#!/usr/bin/env python3
"""The cost of a command in a running `agentbash rpc`, and of a session there (docs/reference.md §12, §7), in one
interleaved run: each round sends `{"type":"bash","command":"true"}` once to a long-lived `agentbash rpc` process
and once, with `"session"`, to a second one, and spawns bare `bash -c true` once (posix_spawn, waited for), in a new
random order; figures are medians of the rounds, ratios are of medians with their 95 % interval (a bootstrap over
the rounds).
  - rpc `true`, the client's request→response round trip, vs the client spawning `bash -c true`: budget ≤ 1.2×;
  - the same request in a session vs without one: budget ≤ 1.3×.
In the same rounds, the floor of that architecture (bench/chain, built here as bench/run.sh builds agentbash): a Go
server that relays each request over a socket pair to its reused Go supervisor, a child subreaper that starts
`bash -c true` with os/exec, drains its pipe, waits and answers — two Go processes in the path and no work beside
the hand-overs; its two rows (no budget) set the 1.2× budget beside it. The same chain with `-layers` gives the
shell the environment agentbash gives every command (run.NonInteractiveEnv, some fifty variables over the
inherited ones, reference §3.7), which bash is slower to start with: that chain is the floor of what the
budget asks for, with nothing of agentbash's own work but what the shell is handed. --chain-variants adds the
chain with the shell started by os.StartProcess, and its supervisor alone (the client talks to it: one Go
process in the path).
The peak RSS of a server that ran 1000 commands is bench/serve.py's (under bench/rss.py).
    bench/rpc.py [--rounds N] [--warmup N] [--json FILE] [--chain-variants] AGENTBASH
"""
import argparse, json, os, shutil, statistics, subprocess, tempfile

from target import Rpc, interleaved, private_env, ratio_interval, spawner

RPC_BUDGET, SESSION_BUDGET = 1.2, 1.3


def build_tool(tmp, name="chain"):
    """bench/NAME (chain, or relay for bench/proxy.py) built into tmp as bench/run.sh builds agentbash (static, its
    flags, then copied over itself)."""
    exe = os.path.join(tmp, name)
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["go", "build", "-trimpath", "-ldflags=-s -w", "-o", exe, f"./bench/{name}"],
                   cwd=os.path.dirname(here), env={**os.environ, "CGO_ENABLED": "0"}, check=True)
    shutil.copy(exe, exe + ".copy")
    os.replace(exe + ".copy", exe)
    return exe


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=600)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("--chain-variants", action="store_true")
    ap.add_argument("agentbash")
    a = ap.parse_args()
    ab = os.path.abspath(a.agentbash)
    tmp = tempfile.mkdtemp(prefix="agentbash-bench-rpc.")
    env = private_env(tmp)
    procs = []
    try:
        chain = build_tool(tmp)
        procs.append(Rpc([ab, "rpc"], env, tmp))
        procs.append(Rpc([ab, "rpc"], env, tmp, {"session": "bench"}))
        procs.append(Rpc([chain], env, tmp))
        procs.append(Rpc([chain, "-layers"], env, tmp))
        plain, session, floor, layered = procs
        cases = {"rpc": plain.call, "rpc, session": session.call, "chain": floor.call, "chain, layers": layered.call,
                 "bash -c true": spawner([shutil.which("bash"), "-c", "true"], env)}
        if a.chain_variants:
            procs.append(Rpc([chain, "-spawn", "start"], env, tmp))
            procs.append(Rpc([chain, "supervisor", "-direct"], env, tmp))
            cases["chain, os.StartProcess"], cases["chain's supervisor alone"] = procs[-2].call, procs[-1].call
        times = interleaved(cases, a.rounds, a.warmup)
    finally:
        for p in procs:
            p.close()
        shutil.rmtree(tmp, ignore_errors=True)

    ms = lambda n: f"{statistics.median(times[n]) * 1e3:.2f} ms"
    rows = []

    def row(what, x, floor, budget):
        r, lo, hi = ratio_interval(times[x], times[floor])
        ok = f"≤ {budget}× ({'met' if r <= budget else 'NOT met'})" if budget else "—"
        rows.append(f"| {what} | {ms(x)} | {ms(floor)} | {r:.2f}× ({lo:.2f}–{hi:.2f}) | {ok} |")

    row("rpc `true`, request→response, vs the client spawning `bash -c true`", "rpc", "bash -c true", RPC_BUDGET)
    row("rpc `true` in a session vs without one", "rpc, session", "rpc", SESSION_BUDGET)
    row("the chain floor (bench/chain: two Go processes relaying, no work) vs the client spawning `bash -c true`",
        "chain", "bash -c true", None)
    row("the chain with the shell's environment layers (`chain -layers`) vs the client spawning `bash -c true`",
        "chain, layers", "bash -c true", None)
    row("rpc `true` vs the chain floor", "rpc", "chain", None)
    row("rpc `true` vs the chain with the environment layers", "rpc", "chain, layers", None)
    if a.chain_variants:
        row("the chain, its shell started by os.StartProcess, vs by os/exec", "chain, os.StartProcess", "chain", None)
        row("the chain's supervisor alone (one Go process) vs the client spawning `bash -c true`",
            "chain's supervisor alone", "bash -c true", None)
        row("the chain (two Go processes) vs its supervisor alone", "chain", "chain's supervisor alone", None)
    print(f"| figure ({a.rounds} rounds) | agentbash | floor | ratio (95 % interval) | budget |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows, "times": times}, f)


if __name__ == "__main__":
    main()
