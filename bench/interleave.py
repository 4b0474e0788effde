#!/usr/bin/env python3
"""Times commands interleaved: each round runs every command once, in a new random order, so a noisy
machine slows them alike. Prints, per command, the median and the mean wall time, the peak RSS of the
process waited for (and of what it waited for); the JSON file has each command's times too, in round order
(the i-th of each command is from the same round).

  interleave.py [--runs N] [--warmup N] [--json FILE] NAME=COMMAND ...   (COMMAND runs under sh -c
  unless it starts with '!' : then it is split on spaces and executed directly)
"""
import argparse, json, os, random, resource, shlex, statistics, sys, time


def spawn(argv):
    t0 = time.perf_counter_ns()
    pid = os.posix_spawnp(argv[0], argv, os.environ,
                          file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    _, status, ru = os.wait4(pid, 0)
    t1 = time.perf_counter_ns()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"interleave: {argv!r} failed with status {status}")
    return (t1 - t0) / 1e9, ru.ru_maxrss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("cmds", nargs="+")
    a = ap.parse_args()
    cmds = []
    for c in a.cmds:
        name, _, text = c.partition("=")
        argv = text[1:].split() if text.startswith("!") else ["sh", "-c", text]
        cmds.append((name, argv))
    times = {n: [] for n, _ in cmds}
    rss = {n: 0 for n, _ in cmds}
    for r in range(a.warmup + a.runs):
        order = cmds[:]
        random.shuffle(order)
        for name, argv in order:
            t, m = spawn(argv)
            if r >= a.warmup:
                times[name].append(t)
                rss[name] = max(rss[name], m)
    out = {n: {"median": statistics.median(v), "mean": statistics.fmean(v),
               "stdev": statistics.stdev(v) if len(v) > 1 else 0.0, "runs": len(v), "maxrssKiB": rss[n],
               "times": v}
           for n, v in times.items()}
    for n, s in out.items():
        print(f"{n:28s} median {s['median']*1e3:9.2f} ms  mean {s['mean']*1e3:9.2f} ± {s['stdev']*1e3:.2f} ms"
              f"  ({s['runs']} runs)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
