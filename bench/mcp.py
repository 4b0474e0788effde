#!/usr/bin/env python3
"""The cost of a command through `agentbash mcp` (docs/reference.md §12, §9) under the official TypeScript SDK
client: bench/mcp.mjs times, in one Node process and interleaved round by round, the SDK's callTool round trip of
`bash {"command":"true"}` on a connection with the server's default per-connection session, the same on a
`--no-session` connection, and the same Node process spawning bare `bash -c true` (child_process.spawn, awaited).
Figures are medians of the rounds, ratios are of medians with their 95 % interval (a bootstrap over the rounds).
Budget: the default connection ≤ 1.5× the spawn. MCP_TYPESCRIPT_SDK names the folder whose node_modules holds
@modelcontextprotocol/sdk (.ci/run installs it there); without it, or without node, the row says not measured.
The peak RSS of a server that ran 1000 commands is bench/serve.py's (under bench/rss.py).
    bench/mcp.py [--rounds N] [--warmup N] [--json FILE] AGENTBASH
"""
import argparse, json, os, shutil, statistics, subprocess, tempfile

from target import private_env, ratio_interval

BUDGET = 1.5
here = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=400)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("agentbash")
    a = ap.parse_args()
    sdk = os.environ.get("MCP_TYPESCRIPT_SDK") or os.path.expanduser("~/.cache/agentbash-ci/mcp-typescript-sdk")
    rows = []
    why = None
    if shutil.which("node") is None:
        why = "node is not on PATH"
    elif not os.path.exists(os.path.join(sdk, "node_modules", "@modelcontextprotocol", "sdk", "package.json")):
        why = f"no @modelcontextprotocol/sdk under {sdk} (set MCP_TYPESCRIPT_SDK)"
    if why:
        rows.append(f"| mcp `true` through the TypeScript SDK client | not measured: {why} | | | ≤ {BUDGET}× |")
    else:
        tmp = tempfile.mkdtemp(prefix="agentbash-bench-mcp.")
        env = dict(private_env(tmp), MCP_TYPESCRIPT_SDK=sdk)
        try:
            p = subprocess.run(["node", os.path.join(here, "mcp.mjs"), os.path.abspath(a.agentbash), str(a.rounds),
                                str(a.warmup)], env=env, cwd=tmp, stdout=subprocess.PIPE, check=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        times = json.loads(p.stdout)
        ms = lambda n: f"{statistics.median(times[n]) * 1e3:.2f} ms"

        def row(what, x, floor, budget):
            r, lo, hi = ratio_interval(times[x], times[floor])
            b = f"≤ {budget}× ({'met' if r <= budget else 'NOT met'})" if budget else "—"
            rows.append(f"| {what} | {ms(x)} | {ms(floor)} | {r:.2f}× ({lo:.2f}–{hi:.2f}) | {b} |")

        row("mcp `true`, the TypeScript SDK's callTool (the connection's session), vs the same Node process "
            "spawning `bash -c true`", "mcp", "bash -c true", BUDGET)
        row("mcp `true` on a `--no-session` connection vs the same spawn", "mcp, --no-session", "bash -c true", None)
    print(f"| figure ({a.rounds} rounds) | agentbash | floor | ratio (95 % interval) | budget |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows}, f)


if __name__ == "__main__":
    main()
