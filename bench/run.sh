#!/usr/bin/env bash
# Benchmarks agentbash against its floors, in one run, and prints each budget beside its floor:
#   per call:   `agentbash run true` against the build of 32052e6 (the 2026-12-01 build) and bare `bash -c true`,
#               and again as uid 65534 when run as root (a user whose process limit binds)
#   throughput: 1 GB of plain text and 1 GB of coloured CRLF text with progress-bar CRs, the whole stream on
#               disk, against the script pipeline `timeout 300 bash -c CMD 2>&1 | tee F | tail -c 51200`; beside
#               them the producer into `cat > /dev/null`, the least any reader of the stream can cost
#   targets:    a command through `rpc --target ssh://…` (a real sshd started on 127.0.0.1, one connection) against
#               local rpc; `run true` and rpc `true` against the build of 53953d9 (before the seam moved):
#               bench/target.py, its own interleaved rounds, each ratio with its 95 % interval
#   sandbox:    `run --sandbox workspace-write true` and the writes-only level against `run true` (budget + 15 ms),
#               as root and as uid 65534: bench/sandbox.py, its own interleaved rounds
#   terminal:   50 MB through `run --tty` against a bare pseudo-terminal read by script(1) (budget 1.5×), pipe
#               mode against the old build, the supervisor's peak RSS in terminal mode: bench/tty.py
#   proxy:      a 100 MB download from a loopback server through the sandbox's proxy (absolute-form and CONNECT)
#               against the same download direct with `--sandbox-network on` (budget 1.3×), and the supervisor's
#               peak RSS of each (budget + 2 MiB): bench/proxy.py, its own interleaved rounds
#   memory:     peak RSS of each agentbash process (client and supervisor) at 3 GB of output, `run` and a task
# Every timed case runs interleaved with its floor (each round runs each command once, in a random order:
# bench/interleave.py), so a noisy machine slows both alike; the ratios are medians over medians. Needs
# python3 and git (to build the old build); static builds (CGO_ENABLED=0), the release's flags.
#   bench/run.sh              # all, in a few minutes
#   RUNS=5 CALLS=400 TROUNDS=1000 SROUNDS=100 TTYROUNDS=5 PROUNDS=60 bench/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out
mkdir -p "$out"
flags=(-trimpath -ldflags='-s -w')
CGO_ENABLED=0 go build "${flags[@]}" -o "$out/agentbash" .
ab="$PWD/$out/agentbash"
# build REV: bench/out/agentbash-REV, built once from a detached worktree of REV, the same way.
build() {
  local bin="$PWD/$out/agentbash-$1" wt
  if [[ ! -x $bin ]]; then
    wt=$(mktemp -d)
    git worktree add -q --detach "$wt" "$1"
    (cd "$wt" && CGO_ENABLED=0 go build "${flags[@]}" -o "$bin" .)
    git worktree remove --force "$wt"
  fi
}
base_rev=${BASE_REV:-32052e6}
base="$PWD/$out/agentbash-$base_rev"
build "$base_rev"
seam_rev=${SEAM_REV:-53953d9}
build "$seam_rev"
tty_rev=${TTY_REV:-d29c208} # the last build before terminal mode
build "$tty_rev"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache" XDG_CONFIG_HOME="$tmp/config"
mkdir -p "$HOME"
runs=${RUNS:-3}
calls=${CALLS:-200}
TROUNDS=${TROUNDS:-500}
SROUNDS=${SROUNDS:-60}
TTYROUNDS=${TTYROUNDS:-3}
PROUNDS=${PROUNDS:-30}
il=bench/interleave.py

echo "== per call: run true ($calls rounds)"
python3 $il --runs "$calls" --warmup 10 --json "$tmp/call.json" \
  "agentbash=!$ab run --format json true" \
  "agentbash@$base_rev=!$base run --format json true" \
  "bare=!bash -c true"

# As root the runtime's spare threads are not reserved (the process limit does not bind root); anyone else
# pays for them, so the per-call case also runs as uid 65534 when this script runs as root.
if [[ $EUID == 0 ]] && command -v setpriv >/dev/null; then
  echo "== per call, as uid 65534: run true ($calls rounds)"
  u="$tmp/u"
  mkdir -p "$u/home" && cp "$ab" "$base" "$il" "$u/" && chmod 755 "$tmp" && chmod -R a+rX "$u" && chown 65534 "$u/home"
  setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$u/home" XDG_STATE_HOME= XDG_CACHE_HOME= XDG_CONFIG_HOME= \
    python3 "$u/interleave.py" --runs "$calls" --warmup 10 --json "$u/home/call.json" \
    "agentbash=!$u/agentbash run --format json true" \
    "agentbash@$base_rev=!$u/agentbash-$base_rev run --format json true" \
    "bare=!bash -c true"
  cp "$u/home/call.json" "$tmp/call-user.json"
fi

echo "== rpc: a command in a running agentbash rpc, and its peak RSS"
python3 bench/rpc.py "$ab" | tee "$out/rpc.md"

echo "== targets: rpc through --target ssh:// vs local rpc; run true and rpc true vs the build of $seam_rev ($TROUNDS rounds)"
python3 bench/target.py --rounds "$TROUNDS" --json "$tmp/target.json" --old-name "$seam_rev" "$ab" "$PWD/$out/agentbash-$seam_rev" | tee "$out/target.md"

echo "== sandbox: run --sandbox workspace-write true vs run true, as root and uid 65534 ($SROUNDS rounds)"
python3 bench/sandbox.py --rounds "$SROUNDS" --json "$tmp/sandbox.json" "$ab" | tee "$out/sandbox.md"

echo "== terminal mode: 50 MB through run --tty vs a bare pseudo-terminal; pipe mode vs the build of $tty_rev ($TTYROUNDS rounds)"
python3 bench/tty.py --rounds "$TTYROUNDS" --json "$tmp/tty.json" --old-name "$tty_rev" "$ab" "$PWD/$out/agentbash-$tty_rev" | tee "$out/tty.md"

echo "== proxy: 100 MB through the sandbox's proxy vs direct with network on ($PROUNDS rounds)"
python3 bench/proxy.py --rounds "$PROUNDS" --json "$tmp/proxy.json" "$ab" | tee "$out/proxy.md"

plain='yes 0123456789abcdef | head -c 1000000000'
# Coloured CRLF lines with a progress bar redrawn by a CR: 7 escape sequences and 2 CRs in 80 bytes.
printf '%s\n' 'yes $'"'"'\e[1;32m 50%\e[0m [=====     ]\r\e[1;32m100%\e[0m [==========] \e[36mdone\e[0m ok\r'"'"' | head -c 1000000000' > "$tmp/colour.sh"
colour="bash $tmp/colour.sh"
art="--format json --artifact-max-bytes 2000000000 --artifact-dir $tmp/art"
echo "== throughput: 1 GB, the whole stream on disk ($runs rounds)"
python3 $il --runs "$runs" --warmup 1 --json "$tmp/gb.json" \
  "agentbash plain=$ab run $art '$plain' > /dev/null; rm -rf $tmp/art" \
  "pipeline plain=timeout 300 bash -c '$plain' 2>&1 | tee $tmp/pipe.log | tail -c 51200 > /dev/null; rm -f $tmp/pipe.log" \
  "reader plain=$plain | cat > /dev/null" \
  "agentbash colour=$ab run $art '$colour' > /dev/null; rm -rf $tmp/art" \
  "pipeline colour=timeout 300 bash -c '$colour' 2>&1 | tee $tmp/pipe.log | tail -c 51200 > /dev/null; rm -f $tmp/pipe.log"

big='yes 0123456789abcdef | head -c 3000000000'
echo "== peak RSS at 3 GB of output (artifact capped at 256 MiB)"
python3 bench/rss.py --exe "$ab" --json "$tmp/rss-run.json" "$ab run --format json --artifact-dir $tmp/art3 '$big'"
rm -rf "$tmp/art3"
python3 bench/rss.py --exe "$ab" --json "$tmp/rss-task.json" \
  "id=\$($ab start --format json '$big' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"details\"][\"taskId\"])') && $ab wait --format json \"\$id\" > $tmp/task.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["details"]; print("task", d["status"], "totalBytes", d["meta"]["truncation"]["totalBytes"])' "$tmp/task.json"

python3 - "$tmp" "$base_rev" "$seam_rev" <<'EOF' | tee "$out/summary.md"
import json, sys
tmp, rev, seam = sys.argv[1], sys.argv[2], sys.argv[3]
call, gb = json.load(open(f"{tmp}/call.json")), json.load(open(f"{tmp}/gb.json"))
rr, rt = json.load(open(f"{tmp}/rss-run.json")), json.load(open(f"{tmp}/rss-task.json"))
ms = lambda s: f"{s['median'] * 1e3:.2f} ms"
sec = lambda s: f"{s['median']:.2f} s"
def row(what, a, f, fmt, budget):
    r = a["median"] / f["median"]
    ok = "met" if r <= budget else "NOT met"
    print(f"| {what} | {fmt(a)} | {fmt(f)} | {r:.2f}× | ≤ {budget}× ({ok}) |")
print("| figure | agentbash | floor | ratio | budget |")
print("|---|---|---|---|---|")
row(f"`run true` vs the build of {rev}", call["agentbash"], call[f"agentbash@{rev}"], ms, 0.8)
try:
    user = json.load(open(f"{tmp}/call-user.json"))
    row(f"`run true` as uid 65534 vs the build of {rev}", user["agentbash"], user[f"agentbash@{rev}"], ms, 0.8)
except FileNotFoundError:
    pass
a, b = call["agentbash"], call["bare"]
print(f"| `run true` vs bare `bash -c true` | {ms(a)} | {ms(b)} | {a['median'] / b['median']:.2f}× | — |")
row("1 GB plain text vs `timeout \\| tee \\| tail`", gb["agentbash plain"], gb["pipeline plain"], sec, 0.5)
a, b = gb["reader plain"], gb["pipeline plain"]
print(f"| 1 GB plain into `cat > /dev/null` (what any reader of the stream costs) vs the pipeline | {sec(a)} | {sec(b)} | "
      f"{a['median'] / b['median']:.2f}× | — |")
row("1 GB coloured CRLF + CR progress vs the same", gb["agentbash colour"], gb["pipeline colour"], sec, 1.0)
for line in json.load(open(f"{tmp}/target.json"))["rows"]:      # bench/target.py's table
    print(line)
for line in json.load(open(f"{tmp}/tty.json"))["rows"]:         # bench/tty.py's table
    print(line)
for line in json.load(open(f"{tmp}/proxy.json"))["rows"]:       # bench/proxy.py's table
    print(line)
for r in json.load(open(f"{tmp}/sandbox.json"))["rows"]:        # bench/sandbox.py's
    if "deltaMs" in r:
        ok = "met" if r["deltaMs"] <= r["budgetMs"] else "NOT met"
        print(f"| {r['case']} ({r['who']}) vs `run true` | +{r['deltaMs']:.1f} ms | — | — | ≤ +{r['budgetMs']:.0f} ms ({ok}) |")
for name, r in (("run", rr), ("task", rt)):
    for role in ("client", "supervisor"):
        mib = r.get(role, 0) / 1024
        print(f"| peak RSS at 3 GB, {name}, {role} | {mib:.1f} MiB | — | — | ≤ 16 MiB ({'met' if mib <= 16 else 'NOT met'}) |")
EOF
