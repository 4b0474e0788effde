#!/usr/bin/env bash
# Benchmarks agentbash against what a script would do instead, in one run (issue: "Measured"):
#   pipeline: timeout 300 bash -c CMD 2>&1 | tee FILE | tail -c 51200
#   bare:     bash -c CMD
# Needs hyperfine and GNU time (Debian: apt-get install hyperfine time). Writes bench/out/*.md and prints a
# summary; numbers go into docs/benchmarks.md by hand.
#   bench/run.sh            # all
#   RUNS=5 bench/run.sh     # fewer runs of the throughput case
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out
mkdir -p "$out"
for tool in hyperfine /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install hyperfine time)"; exit 1; }
done
CGO_ENABLED=0 go build -trimpath -o "$out/agentbash" .
ab="$PWD/$out/agentbash"
# The floor of SPEC §12's per-call budget: the build of 2026-12-01 (commit 32052e6), built the same way.
base_rev=${BASE_REV:-32052e6}
base="$PWD/$out/agentbash-$base_rev"
if [[ ! -x $base ]] && git cat-file -e "$base_rev^{commit}" 2>/dev/null; then
  wt=$(mktemp -d)
  git worktree add -q --detach "$wt" "$base_rev"
  (cd "$wt" && CGO_ENABLED=0 go build -trimpath -o "$base" .)
  git worktree remove --force "$wt"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache" XDG_CONFIG_HOME="$tmp/config"
mkdir -p "$HOME"
runs=${RUNS:-10}

echo "== per-call overhead: true"
base_cmd=()
[[ -x $base ]] && base_cmd=(-n "agentbash@$base_rev" "$base run --format json true")
hyperfine -N --warmup 10 --runs 200 --export-markdown "$out/overhead.md" \
  -n agentbash "$ab run --format json true" \
  "${base_cmd[@]}" \
  -n pipeline "bash -c 'timeout 300 bash -c true 2>&1 | tee $tmp/pipe.log | tail -c 51200'" \
  -n bare "bash -c true"

echo "== rpc: a command in a running agentbash rpc, and its peak RSS"
python3 bench/rpc.py "$ab" | tee "$out/rpc.md"

big='yes 0123456789abcdef | head -c 1000000000'
echo "== throughput: $big (1 GB; artifact cap raised so both keep the whole stream)"
hyperfine --warmup 1 --runs "$runs" --export-markdown "$out/throughput.md" \
  -n agentbash "$ab run --format json --artifact-max-bytes 2000000000 --artifact-dir $tmp/art '$big' > /dev/null; rm -rf $tmp/art" \
  -n pipeline "timeout 300 bash -c '$big' 2>&1 | tee $tmp/pipe.log | tail -c 51200 > /dev/null" \
  -n bare "bash -c '$big' > /dev/null"

echo "== peak RSS at 3 GB of output"
/usr/bin/time -f '%M' -o "$tmp/rss" "$ab" run --format json --artifact-dir "$tmp/art3" \
  'yes 0123456789abcdef | head -c 3000000000' > "$tmp/r3.json"
rss_kib=$(cat "$tmp/rss")
printf '| output | peak RSS |\n|---|---|\n| 3 GB (artifact capped at 256 MiB) | %s MiB |\n' \
  "$(awk -v k="$rss_kib" 'BEGIN{printf "%.1f", k/1024}')" | tee "$out/rss.md"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["details"]; print("status", d["status"], "totalBytes", d["meta"]["truncation"]["totalBytes"])' "$tmp/r3.json"
cat "$out/overhead.md" "$out/throughput.md"
