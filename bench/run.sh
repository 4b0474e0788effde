#!/usr/bin/env bash
# Benchmarks agentbash against its floors, in one run, and prints each budget of docs/reference.md §12 beside its
# floor, met or NOT met (bench/out/summary.md):
#   per call:   `agentbash run true` against the build of 32052e6 (the 2026-12-01 build): ≤ 1.1× as root, ≤ 0.7× as
#               uid 65534 (run again through setpriv when this script runs as root: a user whose process limit binds);
#               bare `bash -c true` beside it
#   start-up:   `agentbash version` against a static Go hello-world (fmt.Println) built the same way here: ≤ 2×; in
#               the same rounds, its floor (bench/out/inits, made here: agentbash's packages with every init run
#               and a main that returns at once) against the hello-world, and `version` against it; `run` of
#               `yes | head -n 5` against `run true`, and its artifact's size (the head limit's read-on; all
#               informational)
#   rpc:        `true` in one long-lived `agentbash rpc`, the client's request→response round trip, against the
#               client spawning `bash -c true` (posix_spawn, waited for): ≤ 1.2×; the same request in a session
#               against without one: ≤ 1.3×; single requests and spawns interleaved round by round: bench/rpc.py
#               in the same rounds, the architecture's floor (bench/chain: a Go server relaying to its reused Go
#               supervisor, which starts bash -c true; the hops, no work) against the spawn, and rpc against it
#               (informational)
#   mcp:        `bash {"command":"true"}` through `agentbash mcp` under the official TypeScript SDK client (its
#               default per-connection session), the callTool round trip, against the same Node process spawning
#               `bash -c true`: ≤ 1.5×; a `--no-session` connection beside it: bench/mcp.py (bench/mcp.mjs)
#   throughput: 1 GB of plain text and 1 GB of coloured CRLF text with progress-bar CRs, the whole stream on
#               disk, against the script pipeline `timeout 300 bash -c CMD 2>&1 | tee F | tail -c 51200`: plain
#               ≤ 0.5×, coloured ≤ 0.8×; plain also ≤ 1.1× its reader floor, the producer into `cat > FILE` in the
#               same directory as the artifact (removed after each round, as the artifact and the tee file are);
#               the producer into `cat > /dev/null` beside them
#   targets:    a command through `rpc --target ssh://…` (a real sshd started on 127.0.0.1, one connection) against
#               local rpc: ≤ 2×; `run true` and rpc `true` against the build of 53953d9 (before the seam moved):
#               bench/target.py
#   sandbox:    `run --sandbox workspace-write true` (network off) and the writes-only level against `run true`:
#               ≤ + 15 ms, as root and as uid 65534: bench/sandbox.py
#   terminal:   50 MB through `run --tty` against a bare pseudo-terminal read by script(1): ≤ 1.5×; pipe mode
#               against the build of d29c208 (before terminal mode); the supervisor's peak RSS: ≤ 32 MiB: bench/tty.py
#   proxy:      a 100 MB download through the sandbox's proxy (absolute-form and CONNECT) against the same download
#               direct with `--sandbox-network on`: ≤ 1.3×; the supervisor's peak RSS: ≤ + 2 MiB: bench/proxy.py
#               in the same rounds, the floor (bench/relay: the direct download through one hop that only
#               relays, spliced) against direct, and the proxy against it (informational)
#   memory:     peak RSS of each agentbash process (client and supervisor) at 3 GB of output, for `run`, a task, and
#               an `rpc` and an `mcp` server that ran 1000 commands, one of them the 3 GB one (bench/serve.py, a
#               raw JSON-lines client): ≤ 16 MiB (bench/rss.py)
# Every timed case runs interleaved with its floor (each round runs each case once, in a new random order:
# bench/interleave.py, or the script's own loop), so a noisy machine slows both alike; figures are medians, ratios
# are of medians, with their 95 % interval (a bootstrap over the rounds, bench/target.py's ratio_interval). Needs
# python3, git (to build the old builds), node with @modelcontextprotocol/sdk (MCP_TYPESCRIPT_SDK, default
# ~/.cache/agentbash-ci/mcp-typescript-sdk as .ci/run installs it), sshd, curl and script(1); static builds
# (CGO_ENABLED=0), the release's flags. About 10 minutes on 2 cores with the defaults:
#   bench/run.sh
#   CALLS=200 RPCROUNDS=600 MCPROUNDS=400 RUNS=5 TROUNDS=500 SROUNDS=60 TTYROUNDS=3 PROUNDS=30 bench/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out
mkdir -p "$out"
flags=(-trimpath -ldflags='-s -w')
# settle FILE: replaces FILE by a copy of itself. The Go linker writes a binary through a mapping, which leaves
# it in the page cache in single 4 KiB pages; a copy (as cp, tar or a package manager installs it) gets large
# folios, which every exec maps faster (docs/benchmarks.md, issue 23's start-up): every binary timed here is one.
settle() { cp "$1" "$1.copy" && mv -f "$1.copy" "$1"; }
CGO_ENABLED=0 go build "${flags[@]}" -o "$out/agentbash" . && settle "$out/agentbash"
ab="$PWD/$out/agentbash"
# build REV: bench/out/agentbash-REV, built once from a detached worktree of REV, the same way.
build() {
  local bin="$PWD/$out/agentbash-$1" wt
  if [[ ! -x $bin ]]; then
    wt=$(mktemp -d)
    git worktree add -q --detach "$wt" "$1"
    (cd "$wt" && CGO_ENABLED=0 go build "${flags[@]}" -o "$bin" .) && settle "$bin"
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
# The start-up floor: a static Go hello-world, built the same way (before HOME moves: the build cache stays).
mkdir "$tmp/hello"
printf '%s\n' 'package main' 'import "fmt"' 'func main() { fmt.Println("hello, world") }' > "$tmp/hello/main.go"
(cd "$tmp/hello" && CGO_ENABLED=0 go build "${flags[@]}" -o hello main.go) && settle "$tmp/hello/hello"
hello="$tmp/hello/hello"
# version's floor: agentbash's own packages and libraries, every init of them run, and a main that returns at
# once (it calls cmd.Execute only when a variable nobody sets says so, so the linker keeps what version links).
# Built in bench/out, inside the module, so it links this checkout's packages.
mkdir -p "$out/inits"
cat > "$out/inits/main.go" <<'GO'
// Command inits is agentbash's start-up floor (bench/run.sh): the binary's inits, then nothing.
package main

import (
	"os"

	"github.com/agentbash/agentbash/cmd"
)

func main() {
	if os.Getenv("AGENTBASH_BENCH_INITS_EXECUTE") == "1" {
		cmd.Execute(cmd.BuildInfo{}, os.Exit, os.Args[1:])
	}
}
GO
CGO_ENABLED=0 go build "${flags[@]}" -o "$out/inits/inits" "./$out/inits" && settle "$out/inits/inits"
inits="$PWD/$out/inits/inits"
export MCP_TYPESCRIPT_SDK="${MCP_TYPESCRIPT_SDK:-$HOME/.cache/agentbash-ci/mcp-typescript-sdk}"
export HOME="$tmp/home" XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache" XDG_CONFIG_HOME="$tmp/config"
mkdir -p "$HOME"
runs=${RUNS:-5}
calls=${CALLS:-200}
RPCROUNDS=${RPCROUNDS:-600}
MCPROUNDS=${MCPROUNDS:-400}
TROUNDS=${TROUNDS:-500}
SROUNDS=${SROUNDS:-60}
TTYROUNDS=${TTYROUNDS:-3}
PROUNDS=${PROUNDS:-30}
il=bench/interleave.py
stage() { echo "== [${SECONDS}s] $*"; }
echo 'yes | head -n 5' > "$tmp/head.sh"

stage "per call and start-up: run true, version, run 'yes | head -n 5' ($calls rounds)"
python3 $il --runs "$calls" --warmup 10 --json "$tmp/call.json" \
  "agentbash=!$ab run --format json true" \
  "agentbash@$base_rev=!$base run --format json true" \
  "bare=!bash -c true" \
  "version=!$ab version" \
  "inits=!$inits" \
  "hello=!$hello" \
  "head=!$ab run --format json --artifact-dir $tmp/headart -f $tmp/head.sh"
rm -rf "$tmp/headart"
$ab run --format json --artifact-dir "$tmp/headart" -f "$tmp/head.sh" > "$tmp/head.json"

# As root the runtime's spare threads are not reserved (the process limit does not bind root); anyone else
# pays for them, so the per-call and start-up cases also run as uid 65534 when this script runs as root.
if [[ $EUID == 0 ]] && command -v setpriv >/dev/null; then
  stage "per call and start-up, as uid 65534: run true, version ($calls rounds)"
  u="$tmp/u"
  mkdir -p "$u/home" && cp "$ab" "$base" "$hello" "$inits" "$il" "$u/" && chmod 755 "$tmp" && chmod -R a+rX "$u" && chown 65534 "$u/home"
  setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$u/home" XDG_STATE_HOME= XDG_CACHE_HOME= XDG_CONFIG_HOME= \
    python3 "$u/interleave.py" --runs "$calls" --warmup 10 --json "$u/home/call.json" \
    "agentbash=!$u/agentbash run --format json true" \
    "agentbash@$base_rev=!$u/agentbash-$base_rev run --format json true" \
    "bare=!bash -c true" \
    "version=!$u/agentbash version" \
    "inits=!$u/inits" \
    "hello=!$u/hello"
  cp "$u/home/call.json" "$tmp/call-user.json"
fi

stage "rpc: true in a running agentbash rpc vs spawning bash -c true; in a session vs without ($RPCROUNDS rounds)"
python3 bench/rpc.py --rounds "$RPCROUNDS" --json "$tmp/rpc.json" "$ab" | tee "$out/rpc.md"

stage "mcp: true through agentbash mcp (TypeScript SDK client) vs the same Node spawning bash -c true ($MCPROUNDS rounds)"
python3 bench/mcp.py --rounds "$MCPROUNDS" --json "$tmp/mcp.json" "$ab" | tee "$out/mcp.md"

stage "targets: rpc through --target ssh:// vs local rpc; run true and rpc true vs the build of $seam_rev ($TROUNDS rounds)"
python3 bench/target.py --rounds "$TROUNDS" --json "$tmp/target.json" --old-name "$seam_rev" "$ab" "$PWD/$out/agentbash-$seam_rev" | tee "$out/target.md"

stage "sandbox: run --sandbox workspace-write true vs run true, as root and uid 65534 ($SROUNDS rounds)"
python3 bench/sandbox.py --rounds "$SROUNDS" --json "$tmp/sandbox.json" "$ab" | tee "$out/sandbox.md"

stage "terminal mode: 50 MB through run --tty vs a bare pseudo-terminal; pipe mode vs the build of $tty_rev ($TTYROUNDS rounds)"
python3 bench/tty.py --rounds "$TTYROUNDS" --json "$tmp/tty.json" --old-name "$tty_rev" "$ab" "$PWD/$out/agentbash-$tty_rev" | tee "$out/tty.md"

stage "proxy: 100 MB through the sandbox's proxy vs direct with network on ($PROUNDS rounds)"
python3 bench/proxy.py --rounds "$PROUNDS" --json "$tmp/proxy.json" "$ab" | tee "$out/proxy.md"

plain='yes 0123456789abcdef | head -c 1000000000'
# Coloured CRLF lines with a progress bar redrawn by a CR: 7 escape sequences and 2 CRs in 80 bytes.
printf '%s\n' 'yes $'"'"'\e[1;32m 50%\e[0m [=====     ]\r\e[1;32m100%\e[0m [==========] \e[36mdone\e[0m ok\r'"'"' | head -c 1000000000' > "$tmp/colour.sh"
colour="bash $tmp/colour.sh"
art="--format json --artifact-max-bytes 2000000000 --artifact-dir $tmp/art"
stage "throughput: 1 GB, the whole stream on disk ($runs rounds)"
python3 $il --runs "$runs" --warmup 1 --json "$tmp/gb.json" \
  "agentbash plain=$ab run $art '$plain' > /dev/null; rm -rf $tmp/art" \
  "pipeline plain=timeout 300 bash -c '$plain' 2>&1 | tee $tmp/pipe.log | tail -c 51200 > /dev/null; rm -f $tmp/pipe.log" \
  "reader plain=$plain | cat > $tmp/reader.log; rm -f $tmp/reader.log" \
  "reader null=$plain | cat > /dev/null" \
  "agentbash colour=$ab run $art '$colour' > /dev/null; rm -rf $tmp/art" \
  "pipeline colour=timeout 300 bash -c '$colour' 2>&1 | tee $tmp/pipe.log | tail -c 51200 > /dev/null; rm -f $tmp/pipe.log"

big='yes 0123456789abcdef | head -c 3000000000'
stage "peak RSS at 3 GB of output (artifact capped at 256 MiB): run, a task, an rpc and an mcp server of 1000 commands"
python3 bench/rss.py --exe "$ab" --json "$tmp/rss-run.json" "$ab run --format json --artifact-dir $tmp/art3 '$big'"
rm -rf "$tmp/art3"
python3 bench/rss.py --exe "$ab" --json "$tmp/rss-task.json" \
  "id=\$($ab start --format json '$big' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"details\"][\"taskId\"])') && $ab wait --format json \"\$id\" > $tmp/task.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["details"]; print("task", d["status"], "totalBytes", d["meta"]["truncation"]["totalBytes"])' "$tmp/task.json"
python3 bench/rss.py --exe "$ab" --json "$tmp/rss-rpc.json" "python3 bench/serve.py rpc $ab 1000"
python3 bench/rss.py --exe "$ab" --json "$tmp/rss-mcp.json" "python3 bench/serve.py mcp $ab 1000"

stage "summary"
python3 - "$tmp" "$base_rev" "$calls" "$runs" <<'EOF' | tee "$out/summary.md"
import json, os, sys
sys.path.insert(0, "bench")
from target import ratio_interval
tmp, rev, calls, runs = sys.argv[1:]
load = lambda name: json.load(open(f"{tmp}/{name}.json"))
call, gb = load("call"), load("gb")
ms = lambda s: f"{s['median'] * 1e3:.2f} ms"
sec = lambda s: f"{s['median']:.2f} s"
def row(what, a, f, fmt, budget):
    r, lo, hi = ratio_interval(a["times"], f["times"])
    ok = f"≤ {budget}× ({'met' if r <= budget else 'NOT met'})" if budget else "—"
    print(f"| {what} | {fmt(a)} | {fmt(f)} | {r:.2f}× ({lo:.2f}–{hi:.2f}) | {ok} |")
print("| figure | agentbash | floor | ratio (95 % interval) | budget |")
print("|---|---|---|---|---|")
users = [("root" if os.geteuid() == 0 else "this user", call, 1.1)]
if os.path.exists(f"{tmp}/call-user.json"):
    users.append(("uid 65534", load("call-user"), 0.7))
for who, c, budget in users:
    row(f"`run true` vs the build of {rev}, {who} ({calls} rounds)", c["agentbash"], c[f"agentbash@{rev}"], ms, budget)
    row(f"`run true` vs bare `bash -c true`, {who}", c["agentbash"], c["bare"], ms, None)
    row(f"`agentbash version` vs a static Go hello-world built the same way, {who}", c["version"], c["hello"], ms, 2)
    row(f"the floor: agentbash's inits and a main that returns at once vs the hello-world, {who}", c["inits"],
        c["hello"], ms, None)
    row(f"`agentbash version` vs that floor, {who}", c["version"], c["inits"], ms, None)
head = json.load(open(f"{tmp}/head.json"))["details"]
row(f"`run 'yes \\| head -n 5'` vs `run true` (its artifact: {os.path.getsize(head['artifactPath']) / 1e6:.1f} MB, "
    "the head limit's read-on)", call["head"], call["agentbash"], ms, None)
for name in ("rpc", "mcp", "target", "tty", "proxy"):          # bench/NAME.py's own rows
    for line in load(name)["rows"]:
        print(line)
for r in load("sandbox")["rows"]:                               # bench/sandbox.py's
    if "deltaMs" in r:
        ok = "met" if r["deltaMs"] <= r["budgetMs"] else "NOT met"
        print(f"| {r['case']} ({r['who']}) vs `run true` | {r['medianMs']:.1f} ms | {r['medianMs'] - r['deltaMs']:.1f} ms "
              f"| +{r['deltaMs']:.1f} ms ({r['lo']:+.1f} … {r['hi']:+.1f}) | ≤ +{r['budgetMs']:.0f} ms ({ok}) |")
row(f"1 GB plain text vs `timeout \\| tee \\| tail` ({runs} rounds)", gb["agentbash plain"], gb["pipeline plain"], sec, 0.5)
row("1 GB plain text vs its reader floor: the producer into `cat > FILE` beside the artifact", gb["agentbash plain"],
    gb["reader plain"], sec, 1.1)
row("1 GB plain into `cat > FILE` vs into `cat > /dev/null` (what keeping the stream costs)", gb["reader plain"],
    gb["reader null"], sec, None)
row("1 GB coloured CRLF + CR progress vs `timeout \\| tee \\| tail`", gb["agentbash colour"], gb["pipeline colour"], sec, 0.8)
for what, name in (("`run`", "run"), ("a task", "task"), ("an `rpc` server of 1000 commands", "rpc"),
                   ("an `mcp` server of 1000 commands", "mcp")):
    r = load(f"rss-{name}")
    for role, who in (("client", "the server" if "server" in what else "the client"), ("supervisor", "its supervisor")):
        mib = r.get(role, 0) / 1024
        print(f"| peak RSS at 3 GB, {what}, {who} | {mib:.1f} MiB | — | — | ≤ 16 MiB ({'met' if mib <= 16 else 'NOT met'}) |")
EOF
