#!/usr/bin/env python3
"""The cost of a command in a running `agentbash rpc` (reference §12): the client's request→response round trip
for `true`, beside the client spawning bare `bash -c true`, interleaved in rounds; then the rpc process's
peak RSS (VmHWM) after 1000 commands. Floors: round trip ≤ 1.5× bare, peak RSS ≤ 16 MiB.
    bench/rpc.py [AGENTBASH] [N]     # N requests of each kind (default 400); AGENTBASH default: a fresh build
"""
import json, os, statistics, subprocess, sys, tempfile, time

here = os.path.dirname(os.path.abspath(__file__))
tmp = tempfile.mkdtemp(prefix="agentbash-bench-rpc.")
if len(sys.argv) > 1:
    ab = sys.argv[1]
else:
    ab = os.path.join(tmp, "agentbash")
    subprocess.run(["go", "build", "-trimpath", "-o", ab, "."], cwd=os.path.dirname(here), check=True,
                   env=dict(os.environ, CGO_ENABLED="0"))
n = int(sys.argv[2]) if len(sys.argv) > 2 else 400
env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTBASH_")}
env.update(HOME=os.path.join(tmp, "home"), XDG_STATE_HOME=os.path.join(tmp, "state"),
           XDG_CACHE_HOME=os.path.join(tmp, "cache"), XDG_CONFIG_HOME=os.path.join(tmp, "config"))
os.makedirs(env["HOME"])
p = subprocess.Popen([ab, "rpc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=tmp)


def call(i, command):
    p.stdin.write(json.dumps({"id": i, "type": "bash", "command": command}).encode() + b"\n")
    p.stdin.flush()
    m = json.loads(p.stdout.readline())
    if m.get("id") != i or m["data"]["details"].get("exitCode") != 0:
        sys.exit(f"unexpected response: {m}")
    return m


for i in range(20):
    call(i, "true")
rpc, bare, rounds = [], [], 8
for r in range(rounds):
    for i in range(n // rounds):
        t = time.perf_counter()
        call(i, "true")
        rpc.append(time.perf_counter() - t)
    for i in range(n // rounds):
        t = time.perf_counter()
        subprocess.run(["bash", "-c", "true"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        bare.append(time.perf_counter() - t)
a, b = statistics.median(rpc), statistics.median(bare)
print("| figure | agentbash rpc | floor |")
print("|---|---|---|")
print(f"| `true`, request→response (median of {len(rpc)}) | {a * 1000:.2f} ms = {a / b:.2f}× bare `bash -c true` "
      f"({b * 1000:.2f} ms) | 1.5× |")
for i in range(1000 - 20 - n):
    call(i, "echo x")
with open(f"/proc/{p.pid}/status") as f:
    hwm = next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) / 1024
print(f"| peak RSS of the rpc process after {max(1000, 20 + n)} commands | {hwm:.1f} MiB | 16 MiB |")
p.stdin.close()
p.wait()
