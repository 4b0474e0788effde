#!/usr/bin/env python3
"""The cost of the sandbox's network proxy (`network: proxy`, docs/reference.md §12, §13), interleaved with its
floor in one run:

  - a 100 MB download by curl from a loopback server through the proxy, as an absolute-form request (curl takes
    the proxy from HTTP_PROXY, which the sandbox sets) and through a CONNECT tunnel (`curl -p`), against the same
    download made directly in a sandbox that has the host's network (`--sandbox-network on`). Budget ≤ 1.3×, the
    ratio of medians with its 95 % interval (a bootstrap over the rounds).
    Beside them, the same curl with no agentbash (for scale) and each sandbox's start alone (`true`). In the same
    rounds, the floor of the budget: the direct download through one hop that does no work but relay
    (bench/relay, built here as bench/run.sh builds agentbash: a TCP forwarder whose io.Copy the kernel splices,
    as the proxy's tunnel and absolute-form bodies are), against the direct one, and the proxy against it: what
    any proxy in the path costs, and what agentbash's own work adds to that.
  - the peak RSS of the run's supervisor, which serves the proxy, for the download through the proxy against the
    direct one (bench/rss.py, --rss-rounds of each, medians). Budget ≤ + 2 MiB.

The server (the origin) is this script's: it answers every request with the same 100 MB file by sendfile(2),
the same in every case, and takes little of the two cores the proxy and curl need (python's http.server, which
copies the file through its own 64 KiB buffer, took 1.02–1.12× the time of this one for a plain curl, medians
of 30–60 interleaved rounds, and more CPU). Everything runs under a
directory in /var/tmp, with HOME there: with agentbash's own directories under /tmp, the writes-only level
(network on) carves /tmp entry by entry into Landlock rules, and its start grows with /tmp.

  proxy.py [--rounds N] [--rss-rounds N] [--json FILE] AGENTBASH
"""
import argparse, json, os, shlex, shutil, socket, statistics, subprocess, sys, tempfile, threading

from rpc import build_tool
from target import ratio_interval

SIZE = 100_000_000
BUDGET = 1.3
RSS_BUDGET_MIB = 2.0
here = os.path.dirname(os.path.abspath(__file__))


class Origin:
    """An HTTP/1.1 server on 127.0.0.1 answering every request with the file at path, by sendfile, keeping
    connections open; it counts the bodies it sent in full."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDONLY)
        self.size = os.fstat(self.fd).st_size
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.served, self.lock = 0, threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            c, _ = self.sock.accept()
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def serve(self, c):
        with c:
            buf = b""
            while True:
                while b"\r\n\r\n" not in buf:
                    d = c.recv(65536)
                    if not d:
                        return
                    buf += d
                _, _, buf = buf.partition(b"\r\n\r\n")  # requests without a body: GET
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                          b"Content-Length: %d\r\n\r\n" % self.size)
                off = 0
                try:
                    while off < self.size:
                        off += os.sendfile(c.fileno(), self.fd, off, self.size - off)
                except OSError:
                    return
                with self.lock:
                    self.served += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--rss-rounds", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("agentbash")
    a = ap.parse_args()
    if shutil.which("curl") is None:
        sys.exit("proxy.py: needs curl")
    ab = os.path.realpath(a.agentbash)
    root = tempfile.mkdtemp(prefix="abproxy-bench-", dir="/var/tmp")
    relay = None
    try:
        home, ws = os.path.join(root, "home"), os.path.join(root, "home", "ws")
        os.makedirs(ws)
        big = os.path.join(root, "big")
        with open(big, "wb") as f:
            block = os.urandom(1 << 20)
            for off in range(0, SIZE, len(block)):
                f.write(block[:SIZE - off])
        origin = Origin(big)
        url = f"http://127.0.0.1:{origin.port}/big"
        relay = subprocess.Popen([build_tool(root, "relay"), f"127.0.0.1:{origin.port}"], stdout=subprocess.PIPE,
                                 text=True)
        relay_port = int(relay.stdout.readline())
        env = {"PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8"}  # no proxy of the caller's
        curl = f"curl -fsS -o /dev/null {url}"
        sb = f"{ab} run --format json --cwd {ws} --sandbox workspace-write"
        px = f"{sb} --sandbox-network proxy --sandbox-allow-host 127.0.0.1:{origin.port}"
        on = f"{sb} --sandbox-network on"
        cases = {
            "proxy, absolute-form": f"{px} {shlex.quote(curl)}",
            "proxy, CONNECT": f"{px} {shlex.quote(curl.replace('curl ', 'curl -p ', 1))}",
            "network on, direct": f"{on} {shlex.quote(curl)}",
            "network on, relay": f"{on} {shlex.quote(curl.replace(f':{origin.port}/', f':{relay_port}/'))}",
            "curl alone": curl,
            "proxy, true": f"{px} true",
            "network on, true": f"{on} true",
        }
        subprocess.run([sys.executable, os.path.join(here, "interleave.py"), "--runs", str(a.rounds), "--warmup", "2",
                        "--json", f"{root}/t.json", *(f"{n}={c}" for n, c in cases.items())],
                       env=env, check=True, stdout=sys.stderr)
        t = json.load(open(f"{root}/t.json"))
        rss = {"proxy, absolute-form": [], "proxy, CONNECT": [], "network on, direct": []}
        for _ in range(a.rss_rounds):
            for name in rss:
                subprocess.run([sys.executable, os.path.join(here, "rss.py"), "--exe", ab, "--json", f"{root}/r.json",
                                cases[name]], env=env, check=True, stdout=subprocess.DEVNULL)
                rss[name].append(json.load(open(f"{root}/r.json")).get("supervisor", 0) / 1024)
        downloads = 5 * (a.rounds + 2) + 3 * a.rss_rounds
        if origin.served != downloads:
            sys.exit(f"proxy.py: the origin sent {origin.served} whole bodies, not {downloads}")
    finally:
        if relay:
            relay.kill()
            relay.wait()
        shutil.rmtree(root, ignore_errors=True)

    rows = []
    ms = lambda n: f"{t[n]['median'] * 1e3:.1f} ms"

    def row(what, x, floor, budget):
        r, lo, hi = ratio_interval(t[x]["times"], t[floor]["times"])
        b = f"≤ {budget}× ({'met' if r <= budget else 'NOT met'})" if budget else "—"
        rows.append(f"| {what} | {ms(x)} | {ms(floor)} | {r:.2f}× ({lo:.2f}–{hi:.2f}) | {b} |")

    row("100 MB through the proxy, absolute-form, vs direct (`network on`)", "proxy, absolute-form",
        "network on, direct", BUDGET)
    row("100 MB through the proxy, CONNECT (`curl -p`), vs direct", "proxy, CONNECT", "network on, direct", BUDGET)
    row("100 MB direct in the sandbox vs curl alone", "network on, direct", "curl alone", None)
    row("the floor: 100 MB direct through one relaying hop (bench/relay) vs direct", "network on, relay",
        "network on, direct", None)
    row("100 MB through the proxy, absolute-form, vs direct through the relay", "proxy, absolute-form",
        "network on, relay", None)
    row("100 MB through the proxy, CONNECT, vs direct through the relay", "proxy, CONNECT", "network on, relay", None)
    row("the start alone: `true` with the proxy vs with `network on`", "proxy, true", "network on, true", None)
    direct = statistics.median(rss["network on, direct"])
    for name in ("proxy, absolute-form", "proxy, CONNECT"):
        m = statistics.median(rss[name])
        ok = "met" if m - direct <= RSS_BUDGET_MIB else "NOT met"
        rows.append(f"| supervisor's peak RSS, 100 MB {name.removeprefix('proxy, ')} through the proxy vs direct "
                    f"| {m:.1f} MiB | {direct:.1f} MiB | {m - direct:+.1f} MiB | ≤ +{RSS_BUDGET_MIB:.0f} MiB ({ok}) |")
    print("| figure | agentbash | floor | ratio (95 % interval) | budget |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    if a.json:
        json.dump({"rows": rows, "times": t, "supervisorMiB": rss}, open(a.json, "w"))


if __name__ == "__main__":
    main()
