#!/usr/bin/env python3
"""The cost of a command in a running `agentbash rpc`, and of a session there (docs/reference.md §12, §7), in one
interleaved run: each round sends `{"type":"bash","command":"true"}` once to a long-lived `agentbash rpc` process
and once, with `"session"`, to a second one, and spawns bare `bash -c true` once (posix_spawn, waited for), in a new
random order; figures are medians of the rounds, ratios are of medians with their 95 % interval (a bootstrap over
the rounds).
  - rpc `true`, the client's request→response round trip, vs the client spawning `bash -c true`: budget ≤ 1.2×;
  - the same request in a session vs without one: budget ≤ 1.3×.
The peak RSS of a server that ran 1000 commands is bench/serve.py's (under bench/rss.py).
    bench/rpc.py [--rounds N] [--warmup N] [--json FILE] AGENTBASH
"""
import argparse, json, os, shutil, statistics, tempfile

from target import Rpc, interleaved, private_env, ratio_interval, spawner

RPC_BUDGET, SESSION_BUDGET = 1.2, 1.3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=600)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("agentbash")
    a = ap.parse_args()
    ab = os.path.abspath(a.agentbash)
    tmp = tempfile.mkdtemp(prefix="agentbash-bench-rpc.")
    env = private_env(tmp)
    procs = []
    try:
        procs.append(Rpc([ab, "rpc"], env, tmp))
        procs.append(Rpc([ab, "rpc"], env, tmp, {"session": "bench"}))
        plain, session = procs
        cases = {"rpc": plain.call, "rpc, session": session.call,
                 "bash -c true": spawner([shutil.which("bash"), "-c", "true"], env)}
        times = interleaved(cases, a.rounds, a.warmup)
    finally:
        for p in procs:
            p.close()
        shutil.rmtree(tmp, ignore_errors=True)

    ms = lambda n: f"{statistics.median(times[n]) * 1e3:.2f} ms"
    rows = []

    def row(what, x, floor, budget):
        r, lo, hi = ratio_interval(times[x], times[floor])
        rows.append(f"| {what} | {ms(x)} | {ms(floor)} | {r:.2f}× ({lo:.2f}–{hi:.2f}) | "
                    f"≤ {budget}× ({'met' if r <= budget else 'NOT met'}) |")

    row("rpc `true`, request→response, vs the client spawning `bash -c true`", "rpc", "bash -c true", RPC_BUDGET)
    row("rpc `true` in a session vs without one", "rpc, session", "rpc", SESSION_BUDGET)
    print(f"| figure ({a.rounds} rounds) | agentbash | floor | ratio (95 % interval) | budget |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows, "times": times}, f)


if __name__ == "__main__":
    main()
