#!/usr/bin/python3
"""bench/features.py - what the launch path costs, between two builds and
with dlrun's optional features on and off.  See bench/README.md,
"Features on and off".

  features.py [--quick] [--reps N] [--base PATH] [--dlrun PATH] [--tools DIR]

1. --base PATH (an older dlrun): the same commands with both binaries,
   interleaved A B B A ... (the tiny ones more often) so that a busy moment of the machine hits both:
   `-np 1 true`, `-np 8 true`, `-np 4 python3 -c pass` and the fail-fast
   time (rank 1 of 4 exits 3 after 0.5 s: its exit to dlrun's exit).
2. dlrun alone, each feature on against a reference with them off
   (interleaved the same way): --stall-timeout 1h, the MPI run-time guard
   (off: --mpi=none), the job cgroup (DLRUN_CGROUP=1; the `dlrun guard`
   watcher itself is always there, part 1 shows its cost) and all on.
   The status file of `dlrun status` is always kept; it is off only when
   XDG_RUNTIME_DIR names a folder whose dlrun/ others could read, which
   also turns off the topology and binding caches kept there, so its rows
   compare that with DLRUN_TOPOLOGY_CACHE=0 (status on, caches off).  For each: `-np 1 true`, `-np 8 true`, fail-fast, and the CPU time
   dlrun (and its agents) used during `-np 4 sleep 3` (wait4's rusage;
   the four sleeps add about a millisecond).

Each row: median and the spread (25th-75th percentile) of the times, and
the ratio to the reference: the median of the per-pair ratios (runs next
to each other in time) and their 25th-75th percentile; a ratio whose
spread holds 1.00 is within noise.  Timings are reported, never enforced.
Exit status: 0 when every run did what it should, 1 when one failed or
hung, 2 bad usage.
"""
import argparse
import os
import signal
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def quantile(xs, q):
    s = sorted(xs)
    if len(s) == 1:
        return s[0]
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


class Runner:
    def __init__(self, tmp):
        self.tmp = tmp
        self.err = os.path.join(tmp, "stderr")
        self.sleeper = os.path.join(tmp, "dlrun-features-sleeper")
        os.symlink("/bin/sleep", self.sleeper)
        self.stamp = os.path.join(tmp, "stamp")

    def spawn(self, argv, env, limit=120):
        """Run argv once: (wall seconds, status, CPU seconds, end time)."""
        fa = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
              (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
              (os.POSIX_SPAWN_OPEN, 2, self.err,
               os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)]
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, env, file_actions=fa, setpgroup=0)
        signal.alarm(limit)
        try:
            _, st, ru = os.wait4(pid, 0)
        except InterruptedError:
            os.killpg(pid, signal.SIGKILL)
            os.wait4(pid, 0)
            raise
        wall = time.perf_counter() - t0
        end = time.time()
        signal.alarm(0)
        code = os.waitstatus_to_exitcode(st)
        return wall, code, ru.ru_utime + ru.ru_stime, end

    def measure(self, kind, dlrun, flags, env):
        """One sample (seconds) of workload kind with this dlrun."""
        if kind.startswith("np"):
            n = kind.split()[0][2:]
            prog = ["/bin/true"] if kind.endswith("true") else \
                ["/usr/bin/python3", "-c", "pass"]
            wall, code, _, _ = self.spawn([dlrun, *flags, "--oversubscribe", "-np", n, *prog], env)
            if code != 0:
                raise RuntimeError(f"{kind}: exit {code}")
            return wall
        if kind == "failfast":
            try:
                os.unlink(self.stamp)
            except FileNotFoundError:
                pass
            argv = [dlrun, *flags, "--oversubscribe", "-np", "4", "/bin/sh",
                    os.path.join(HERE, "failrank.sh"), self.stamp, self.sleeper]
            _, code, _, end = self.spawn(argv, env)
            if code != 3:
                raise RuntimeError(f"failfast: exit {code}, not 3")
            with open(self.stamp) as f:
                return end - float(f.read())
        if kind == "cpu":
            wall, code, cpu, _ = self.spawn(
                [dlrun, *flags, "--oversubscribe", "-np", "4", "/bin/sleep", "3"], env)
            if code != 0:
                raise RuntimeError(f"sleep: exit {code}")
            return cpu
        raise ValueError(kind)


def interleave(run, variants, kind, reps):
    """variants: [(name, dlrun, flags, env)]; the first is the reference.
    Returns {name: [samples]}, the same length, sample i of each taken
    next to each other in time (order reversed every other round)."""
    out = {v[0]: [] for v in variants}
    for v in variants:               # warm-up: page cache, caches of dlrun
        run.measure(kind, v[1], v[2], v[3])
    for i in range(reps):
        order = variants if i % 2 == 0 else variants[::-1]
        for name, dlrun, flags, env in order:
            out[name].append(run.measure(kind, dlrun, flags, env))
    return out


def table(title, kind, samples, unit):
    scale, fmt = 1000, "{:8.1f}"      # seconds in, milliseconds out
    names = list(samples)
    ref = samples[names[0]]
    print(f"\n== {title}")
    print(f"{'':34} {'median':>11} {'p25-p75':>19} {'ratio':>6} "
          f"{'pairs p25-p75':>14}")
    for name in names:
        xs = samples[name]
        med = fmt.format(statistics.median(xs) * scale)
        spread = (fmt.format(quantile(xs, .25) * scale).strip() + "-" +
                  fmt.format(quantile(xs, .75) * scale).strip())
        if name == names[0]:
            print(f"{name:34} {med} {unit} {spread:>16} {unit}  (reference)")
            continue
        r = [a / b for a, b in zip(xs, ref) if b > 0]
        lo, hi = quantile(r, .25), quantile(r, .75)
        noise = "  noise" if lo <= 1.0 <= hi else ""
        print(f"{name:34} {med} {unit} {spread:>16} {unit} "
              f"{statistics.median(r):6.2f}  {lo:5.2f}-{hi:5.2f}{noise}")


def main():
    ap = argparse.ArgumentParser(description="dlrun's launch path between "
                                 "builds and with its features on and off")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int)
    ap.add_argument("--base", help="an older dlrun to compare with")
    ap.add_argument("--dlrun", default=os.path.join(os.path.dirname(HERE),
                                                     "build", "dlrun"))
    args = ap.parse_args()
    reps = args.reps or (5 if args.quick else 15)
    if reps < 1:
        ap.error("--reps must be at least 1")
    for b in [args.dlrun] + ([args.base] if args.base else []):
        if not os.access(b, os.X_OK):
            print(f"features: {b} is not executable (make first)",
                  file=sys.stderr)
            return 1
    signal.signal(signal.SIGALRM, lambda *_: None)
    env = dict(os.environ)
    with open("/proc/loadavg") as f:
        load0 = " ".join(f.read().split()[:3])
    print(f"# bench/features.py: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} cores, load average {load0}, {reps} rounds")
    print(f"# dlrun: {args.dlrun}" + (f"; base: {args.base}" if args.base else ""))
    with tempfile.TemporaryDirectory(prefix="dlrun-features.") as tmp:
        run = Runner(tmp)
        off_dir = os.path.join(tmp, "xdg-off")
        os.makedirs(os.path.join(off_dir, "dlrun"))
        os.chmod(os.path.join(off_dir, "dlrun"), 0o755)   # refused: no status
        status_off = dict(env, XDG_RUNTIME_DIR=off_dir)
        cg = dict(env, DLRUN_CGROUP="1")
        nocache = dict(env, DLRUN_TOPOLOGY_CACHE="0")
        try:
            if args.base:
                for kind, unit, title, n in [
                        ("np1 true", "ms", "dlrun -np 1 true", 4 * reps),
                        ("np8 true", "ms", "dlrun -np 8 true", 2 * reps),
                        ("np4 python", "ms", "dlrun -np 4 python3 -c pass", reps),
                        ("failfast", "ms", "fail-fast: rank 1's exit to dlrun's (-np 4)", reps)]:
                    s = interleave(run, [("base (--base)", args.base, [], env),
                        ("dlrun (this build)", args.dlrun, [], env)], kind, n)
                    table(title + ": base against this build", kind, s, unit)
            d = args.dlrun
            variants = [
                ("reference (--mpi=none)", d, ["--mpi=none"], env),
                ("--stall-timeout 1h", d, ["--mpi=none", "--stall-timeout", "1h"], env),
                ("MPI guard (--mpi auto)", d, [], env),
                ("DLRUN_CGROUP=1", d, ["--mpi=none"], cg),
                ("all on", d, ["--stall-timeout", "1h"], cg),
            ]
            # The status file cannot be turned off alone: a runtime folder
            # dlrun refuses also turns off the topology and binding caches
            # kept there, so compare with those caches off (both rows).
            status = [
                ("status off, caches off", d, ["--mpi=none"], status_off),
                ("status on, caches off", d, ["--mpi=none"], nocache),
            ]
            for kind, title, n in [
                    ("np1 true", "dlrun -np 1 true", 2 * reps),
                    ("np8 true", "dlrun -np 8 true", reps),
                    ("failfast", "fail-fast (-np 4)", max(3, reps // 2)),
                    ("cpu", "CPU time of dlrun -np 4 sleep 3", max(3, reps // 3))]:
                table("features: " + title, kind,
                      interleave(run, variants, kind, n), "ms")
                table("the status file: " + title, kind,
                      interleave(run, status, kind, n), "ms")
        except (RuntimeError, InterruptedError) as e:
            print(f"features: a run failed or hung: {e}", file=sys.stderr)
            with open(run.err, errors="replace") as f:
                sys.stderr.write("".join(f.readlines()[-10:]))
            return 1
    with open("/proc/loadavg") as f:
        print("\n# load average at the end: " + " ".join(f.read().split()[:3]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
