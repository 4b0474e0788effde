#!/usr/bin/env python3
"""The cost of the sandbox (reference §12: a sandboxed run ≤ `run true` + 15 ms): `run true` against `run --sandbox
workspace-write true` (the namespaced level: user, mount and network namespaces, Landlock, seccomp) and against the
writes-only level (`network: on`, nothing denied: Landlock and seccomp alone), interleaved in one run (each round runs
each command once, in a new random order), as root and, when run as root, as uid 65534 (through setpriv). Figures
are medians; beside each difference of medians, its 95 % interval (a bootstrap over the rounds).
    bench/sandbox.py [--rounds N] [--json FILE] AGENTBASH
"""
import argparse, json, os, random, shutil, statistics, subprocess, sys, tempfile, time

BUDGET_MS = 15.0


def spawn(argv, env):
    t0 = time.perf_counter_ns()
    p = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t1 = time.perf_counter_ns()
    if p.returncode != 0:
        sys.exit(f"sandbox.py: {argv!r} failed with status {p.returncode}: {p.stderr.decode()[-400:]}")
    return (t1 - t0) / 1e6


def interval(a, b, n=2000):
    """95 % bootstrap interval of median(b) - median(a), rounds resampled in pairs."""
    k, ds = len(a), []
    for _ in range(n):
        idx = [random.randrange(k) for _ in range(k)]
        ds.append(statistics.median(b[i] for i in idx) - statistics.median(a[i] for i in idx))
    ds.sort()
    return ds[int(0.025 * n)], ds[int(0.975 * n)]


def persona(root, ab, rounds, prefix, label):
    home = os.path.join(root, label)
    ws = os.path.join(home, "ws")
    os.makedirs(ws)
    cfg = os.path.join(home, "writes-only.yaml")
    with open(cfg, "w") as f:
        f.write('sandbox:\n  network: "on"\n  denyRead: []\n')
    if prefix:
        for d, _, files in os.walk(home):
            os.chown(d, 65534, 65534)
            for x in files:
                os.chown(os.path.join(d, x), 65534, 65534)
    env = {"PATH": "/usr/bin:/bin", "HOME": home, "XDG_STATE_HOME": home + "/.local/state",
           "XDG_CACHE_HOME": home + "/.cache", "XDG_CONFIG_HOME": home + "/.config", "LANG": "C.UTF-8"}
    cases = {
        "run true": [ab, "run", "--cwd", ws, "true"],
        "run --sandbox workspace-write true": [ab, "run", "--sandbox", "workspace-write", "--cwd", ws, "true"],
        "writes-only (Landlock alone)": [ab, "run", "--config", cfg, "--sandbox", "workspace-write", "--cwd", ws, "true"],
    }
    times = {n: [] for n in cases}
    for r in range(rounds + 5):
        order = list(cases.items())
        random.shuffle(order)
        for name, argv in order:
            t = spawn(prefix + argv, env)
            if r >= 5:
                times[name].append(t)
    base = times["run true"]
    rows = []
    for name, v in times.items():
        row = {"who": label, "case": name, "medianMs": statistics.median(v)}
        if name != "run true":
            lo, hi = interval(base, v)
            row.update(deltaMs=statistics.median(v) - statistics.median(base), lo=lo, hi=hi, budgetMs=BUDGET_MS)
        rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--json")
    ap.add_argument("agentbash")
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="absandbox-bench-", dir="/var/tmp")   # not under /tmp: the sandbox's is private
    os.chmod(root, 0o755)
    try:
        ab = os.path.join(root, "agentbash")
        shutil.copy2(a.agentbash, ab)
        os.chmod(ab, 0o755)
        rows = persona(root, ab, a.rounds, [], "root" if os.geteuid() == 0 else "self")
        if os.geteuid() == 0 and shutil.which("setpriv"):
            rows += persona(root, ab, a.rounds, ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"],
                            "uid65534")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"| who | case | median | Δ vs run true (95 % interval) | budget |\n|---|---|---|---|---|")
    for r in rows:
        d = (f"+{r['deltaMs']:.1f} ms ({r['lo']:+.1f} … {r['hi']:+.1f})" if "deltaMs" in r else "")
        b = (f"≤ +{r['budgetMs']:.0f} ms {'met' if r['deltaMs'] <= r['budgetMs'] else 'NOT met'}" if "deltaMs" in r else "")
        print(f"| {r['who']} | {r['case']} | {r['medianMs']:.1f} ms | {d} | {b} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
