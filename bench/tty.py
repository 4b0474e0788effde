#!/usr/bin/env python3
"""Terminal mode's cost (docs/reference.md §12, §14), interleaved with its floors in one run:

  - 50 MB of short lines (`yes | head -c 50000000`) through `agentbash run --tty` against the same output read
    from a bare pseudo-terminal by a plain reader (`script -qec CMD /dev/null`, util-linux): the kernel's ONLCR
    processing makes a terminal far slower than a pipe for short lines, and that is the floor. Budget ≤ 1.5×.
  - the same through `agentbash run` (a pipe) against the build named by --old (before terminal mode): pipe
    mode must be unchanged within noise (the emulator is never on its path).
  - the peak RSS of the --tty run's supervisor (bench/rss.py). Budget ≤ 32 MiB.

  tty.py [--rounds N] [--json FILE] AGENTBASH OLD_AGENTBASH
"""
import argparse, json, os, shutil, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--json")
ap.add_argument("--old-name", default="old")
ap.add_argument("ab")
ap.add_argument("old")
a = ap.parse_args()
if shutil.which("script") is None:
    sys.exit("tty.py: needs script(1) from util-linux, the bare pseudo-terminal reader")
tmp = tempfile.mkdtemp()
try:
    out = "yes | head -c 50000000"
    art = f"--format json --artifact-dir {tmp}/art"
    cases = [
        f"tty={a.ab} run {art} --timeout 600 --tty '{out}'",
        f"bare pty=script -qec '{out}' /dev/null",
        f"pipe={a.ab} run {art} --timeout 600 '{out}'",
        f"pipe {a.old_name}={a.old} run {art} --timeout 600 '{out}'",
    ]
    il = os.path.join(here, "interleave.py")
    subprocess.run([sys.executable, il, "--runs", str(a.rounds), "--warmup", "1", "--json", f"{tmp}/t.json", *cases],
                   check=True, stdout=sys.stderr)
    t = json.load(open(f"{tmp}/t.json"))
    subprocess.run([sys.executable, os.path.join(here, "rss.py"), "--exe", a.ab, "--json", f"{tmp}/rss.json",
                    f"{a.ab} run {art} --timeout 600 --tty '{out}' > {tmp}/r.json"], check=True, stdout=sys.stderr)
    rss = json.load(open(f"{tmp}/rss.json"))
    res = json.load(open(f"{tmp}/r.json"))["details"]
finally:
    shutil.rmtree(tmp, ignore_errors=True)

sup = rss.get("supervisor", 0) / 1024
rows = []


def row(what, x, floor, budget):
    r = t[x]["median"] / t[floor]["median"]
    ok = "met" if r <= budget else "NOT met"
    rows.append(f"| {what} | {t[x]['median']:.2f} s | {t[floor]['median']:.2f} s | {r:.2f}× | ≤ {budget}× ({ok}) |")


row("50 MB of `yes` through `run --tty` vs a bare pseudo-terminal read by `script`", "tty", "bare pty", 1.5)
row(f"50 MB of `yes` through `run` (a pipe) vs the build of {a.old_name}", "pipe", f"pipe {a.old_name}", 1.1)
ok = "met" if sup <= 32 else "NOT met"
rows.append(f"| peak RSS of the `--tty` run's supervisor at 50 MB | {sup:.1f} MiB | — | — | ≤ 32 MiB ({ok}) |")
screen = res.get("screen") or {}
rows.append(f"| that run: totalBytes {res['meta']['truncation']['totalBytes'] if res.get('meta') else '?'}, "
            f"screen approximate {screen.get('approximate', False)} | | | | |")
print("| figure | agentbash | floor | ratio | budget |")
print("|---|---|---|---|---|")
print("\n".join(rows))
if a.json:
    json.dump({"rows": rows, "times": t, "supervisorMiB": sup}, open(a.json, "w"))
