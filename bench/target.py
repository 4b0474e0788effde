#!/usr/bin/env python3
"""The cost of a target (reference §12): a command through `rpc --target ssh://…` over one connection against the
same through local `rpc` (budget ≤ 2×), and the local path against the build before the seam moved (commit 53953d9
by default): `run true` and rpc `true`, which must stay within noise of it. All in one interleaved run: each round
sends `{"type":"bash","command":"true"}` once to each long-lived rpc process (local, through ssh, the old build's
local) and spawns `run true` of both builds, in a new random order; figures are medians, ratios are of medians, and
beside each ratio its 95 % interval (a bootstrap over the rounds) says what the noise allows.

The target is this machine through a real OpenSSH server started here on 127.0.0.1 (/usr/sbin/sshd, generated host
and user keys, a private remote HOME whose PATH has the build as `agentbash`); the local side reaches it through the
system ssh client, with an `ssh` wrapper first on PATH that adds `-F` the fixture's client config (OpenSSH reads
~/.ssh/config from the passwd entry's home, not $HOME). Run as root, or as a user sshd can log in by key.
    bench/target.py [--rounds N] [--json FILE] AGENTBASH OLD_AGENTBASH
"""
import argparse, json, os, pwd, random, shlex, shutil, socket, statistics, subprocess, sys, tempfile, time

SSHD = "/usr/sbin/sshd"
ALIAS = "abbench"
REQ = b'{"id":%d,"type":"bash","command":"true"}\n'


class Sshd:
    """sshd -D on a free port of 127.0.0.1, as the test's user, and the client config and ssh wrapper for it."""

    def __init__(self, root, agentbash):
        self.root = root
        self.home = os.path.join(root, "remote-home")
        self.bindir = os.path.join(root, "clientbin")
        self.conf = os.path.join(root, "ssh_config")
        bindir = os.path.join(self.home, ".local", "bin")
        os.makedirs(bindir)
        shutil.copy2(agentbash, os.path.join(bindir, "agentbash"))
        key = {}
        for name in ("host", "user"):
            key[name] = os.path.join(root, name + "_ed25519")
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key[name]], check=True,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        auth = os.path.join(root, "authorized_keys")
        shutil.copyfile(key["user"] + ".pub", auth)
        os.chmod(auth, 0o600)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        h = self.home
        conf = os.path.join(root, "sshd_config")
        with open(conf, "w") as f:
            f.write("\n".join([
                f"ListenAddress 127.0.0.1:{port}", f"HostKey {key['host']}", f"PidFile {root}/sshd.pid",
                f"AuthorizedKeysFile {auth}", "PermitRootLogin prohibit-password", "PasswordAuthentication no",
                "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no", "X11Forwarding no", "PrintMotd no",
                f"SetEnv HOME={h} PATH={bindir}:/usr/bin:/bin XDG_STATE_HOME={h}/.local/state "
                f"XDG_CONFIG_HOME={h}/.config XDG_CACHE_HOME={h}/.cache", ""]))
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", 0o755, exist_ok=True)     # the privilege separation dir
        self.log = open(os.path.join(root, "sshd.log"), "ab")
        self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", conf], stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=self.log, start_new_session=True,
                                     env={k: v for k, v in os.environ.items() if not k.startswith("SSH_")})
        with open(self.conf, "w") as f:
            f.write("\n".join([
                f"Host {ALIAS}", "  HostName 127.0.0.1", f"  Port {port}", f"  User {pwd.getpwuid(os.getuid()).pw_name}",
                f"  IdentityFile {key['user']}", "  IdentitiesOnly yes", f"  UserKnownHostsFile {root}/known_hosts",
                "  GlobalKnownHostsFile /dev/null", "  StrictHostKeyChecking accept-new", "  GSSAPIAuthentication no",
                "  LogLevel ERROR", ""]))
        os.makedirs(self.bindir)
        wrapper = os.path.join(self.bindir, "ssh")
        with open(wrapper, "w") as f:
            f.write(f"#!/bin/sh\nexec {shlex.quote(shutil.which('ssh'))} -F {shlex.quote(self.conf)} \"$@\"\n")
        os.chmod(wrapper, 0o755)
        t0 = time.monotonic()
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() - t0 > 15:
                    self.stop()
                    sys.exit(f"target.py: sshd did not start: {open(self.log.name).read()[-500:]}")
                time.sleep(0.05)

    def env(self, base):
        e = {k: v for k, v in base.items() if k not in ("SSH_AUTH_SOCK", "SSH_AGENT_PID")}
        e["PATH"] = self.bindir + os.pathsep + base.get("PATH", "/usr/bin:/bin")
        return e

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(5)
        self.log.close()


class Echo:
    """A long-lived `ssh ALIAS cat` through the same server: call() is one line's round trip, what the connection
    itself costs a request and its response."""

    def __init__(self, env):
        self.p = subprocess.Popen(["ssh", "-T", "-o", "BatchMode=yes", ALIAS, "cat"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, env=env)

    def call(self):
        t0 = time.perf_counter_ns()
        self.p.stdin.write(REQ % 0)
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        t1 = time.perf_counter_ns()
        if line != REQ % 0:
            sys.exit(f"target.py: ssh {ALIAS} cat: read back {line[:300]!r}")
        return (t1 - t0) / 1e9

    def close(self):
        self.p.stdin.close()
        self.p.wait(30)


class Rpc:
    """A long-lived `agentbash rpc …`: call() is one request's round trip, from its write to its response read; fields
    go into every request beside `{"type":"bash","command":"true"}` (a session: `{"session": NAME}`)."""

    def __init__(self, argv, env, cwd, fields=None):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd)
        self.n = 0
        self.extra = json.dumps(fields)[1:-1].encode() if fields else b""

    def call(self):
        self.n += 1
        req = REQ % self.n
        if self.extra:
            req = req[:-2] + b"," + self.extra + b"}\n"
        t0 = time.perf_counter_ns()
        self.p.stdin.write(req)
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        t1 = time.perf_counter_ns()
        m = json.loads(line or b"null")
        if not m or m.get("id") != self.n or m["data"]["details"].get("exitCode") != 0:
            sys.exit(f"target.py: {self.p.args[1:]}: unexpected response {line[:300]!r}")
        return (t1 - t0) / 1e9

    def close(self):
        if not self.p.stdin.closed:
            self.p.stdin.close()
        self.p.wait(30)


def spawner(argv, env):
    def run():
        t0 = time.perf_counter_ns()
        pid = os.posix_spawn(argv[0], argv, env,
                             file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
        _, status, _ = os.wait4(pid, 0)
        t1 = time.perf_counter_ns()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"target.py: {argv!r} failed with status {status}")
        return (t1 - t0) / 1e9
    return run


def private_env(tmp):
    """The caller's environment without AGENTBASH_* settings, with HOME and the XDG directories under tmp (HOME made)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTBASH_")}
    env.update(HOME=os.path.join(tmp, "home"), XDG_STATE_HOME=os.path.join(tmp, "state"),
               XDG_CACHE_HOME=os.path.join(tmp, "cache"), XDG_CONFIG_HOME=os.path.join(tmp, "config"))
    os.makedirs(env["HOME"])
    return env


def interleaved(cases, rounds, warmup):
    """Calls each of cases (name → a function returning its time) once a round, in a new random order each round;
    the times of each after the warm-up rounds, in round order (the i-th of each is from the same round)."""
    times = {n: [] for n in cases}
    order = list(cases)
    for r in range(warmup + rounds):
        random.shuffle(order)
        for name in order:
            t = cases[name]()
            if r >= warmup:
                times[name].append(t)
    return times


def ratio_interval(a, b, n=2000):
    """The ratio of medians of a over b and its 95 % bootstrap interval, resampling whole rounds (a[i], b[i])."""
    rng, k, rs = random.Random(1), len(a), []
    for _ in range(n):
        idx = [rng.randrange(k) for _ in range(k)]
        rs.append(statistics.median(a[i] for i in idx) / statistics.median(b[i] for i in idx))
    rs.sort()
    return statistics.median(a) / statistics.median(b), rs[int(0.025 * n)], rs[int(0.975 * n) - 1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--json")
    ap.add_argument("--old-name", default="53953d9")
    ap.add_argument("agentbash")
    ap.add_argument("old")
    a = ap.parse_args()
    ab, old = os.path.abspath(a.agentbash), os.path.abspath(a.old)
    tmp = tempfile.mkdtemp(prefix="agentbash-bench-target.")
    env = private_env(tmp)
    sshd = Sshd(os.path.join(tmp, "sshd"), ab)
    env = sshd.env(env)
    procs = []
    try:
        procs.append(Rpc([ab, "rpc"], env, tmp))
        procs.append(Rpc([ab, "rpc", "--target", "ssh://" + ALIAS], env, tmp))
        procs.append(Rpc([old, "rpc"], env, tmp))
        procs.append(Echo(env))
        procs.append(Rpc(["ssh", "-T", "-o", "BatchMode=yes", ALIAS, "agentbash rpc"], env, tmp))
        local, target, oldrpc, echo, bare = procs
        cases = {
            "rpc local": local.call,
            "rpc ssh": target.call,
            "ssh cat (a line)": echo.call,
            "ssh agentbash rpc": bare.call,
            f"rpc local @{a.old_name}": oldrpc.call,
            "run true": spawner([ab, "run", "--format", "json", "true"], env),
            f"run true @{a.old_name}": spawner([old, "run", "--format", "json", "true"], env),
        }
        times = interleaved(cases, a.rounds, a.warmup)
        target.close()
        bare.close()
        logins = open(sshd.log.name, errors="replace").read().count("Accepted publickey")
    finally:
        for p in procs:
            p.close()
        sshd.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    med = {n: statistics.median(v) for n, v in times.items()}
    for n, v in times.items():
        print(f"{n:24s} median {med[n] * 1e3:7.3f} ms  mean {statistics.fmean(v) * 1e3:7.3f} ms  "
              f"p90 {statistics.quantiles(v, n=10)[-1] * 1e3:7.3f} ms  ({len(v)} rounds)")
    ms = lambda s: f"{s * 1e3:.2f} ms"
    # rpc --target and ssh cat: one login each, for the whole run.
    print(f"sshd accepted {logins} logins in the run (rpc --target, ssh cat, ssh agentbash rpc: one each)")
    print("| figure | agentbash | floor | ratio (95 % interval) | budget |")
    print("|---|---|---|---|---|")
    out = {"medians": med, "ratios": {}, "logins": logins, "rows": []}

    def row(what, x, y, budget, ok):
        r, lo, hi = ratio_interval(times[x], times[y])
        out["ratios"][what] = [r, lo, hi]
        out["rows"].append(f"| {what} | {ms(med[x])} | {ms(med[y])} | {r:.2f}× ({lo:.3f}–{hi:.3f}) | "
                           f"{budget} ({ok(r, lo, hi)}) |")
        print(out["rows"][-1])

    row("rpc `true` through `--target ssh://` vs local rpc", "rpc ssh", "rpc local", "≤ 2×",
        lambda r, lo, hi: "met" if r <= 2 else "NOT met")
    row(f"rpc `true` through bare `ssh {ALIAS} agentbash rpc` (no local agentbash) vs local rpc", "ssh agentbash rpc",
        "rpc local", "—", lambda r, lo, hi: "what the connection and the remote side cost")
    out["rows"].append(f"| a line through `ssh {ALIAS} cat` (the connection's own round trip) | "
                       f"{ms(med['ssh cat (a line)'])} | — | — | — |")
    print(out["rows"][-1])
    noise = lambda r, lo, hi: "within noise" if lo <= 1 <= hi else ("faster" if hi < 1 else "SLOWER")
    row(f"rpc `true` vs the build of {a.old_name}", "rpc local", f"rpc local @{a.old_name}", "≈ 1×", noise)
    row(f"`run true` vs the build of {a.old_name}", "run true", f"run true @{a.old_name}", "≈ 1×", noise)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
