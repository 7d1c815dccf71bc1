#!/usr/bin/python3
"""dlrun's benchmarks against the tools users would pick instead.

Run through bench/run.sh, which builds the C helpers (floor, timeit, writer,
linecheck) into a temporary folder and passes it here.  Debian's Python,
standard library only.  Timings never gate anything: the exit status is 1
only when a benchmark could not run at all (a tool missing, a command that
failed or hung, a wrong all-reduce sum); goals are reported in the summary.

Each benchmark prints one table: tool, N or case, median, min (or best), a
ratio with what it is a ratio of, and notes.  See bench/README.md.
"""
import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = "/usr/bin/python3"           # Debian's, the one with torch
ALLREDUCE = os.path.join(ROOT, "tests", "e2e", "allreduce.py")

errors = []                       # what could not run: makes the exit 1
goals = []      # (goal, figure, met: True/False, None unmeasured, "info")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def fail(what, why):
    errors.append(f"{what}: {why}")
    log(f"bench: ERROR {what}: {why}")


# ---------------------------------------------------------------- tables

def table(title, header, rows, note=None):
    """Print rows (lists of str) under header, columns sized to fit."""
    print()
    print(f"== {title}")
    if note:
        print(note)
    widths = [max(len(str(r[i])) for r in [header] + rows)
              for i in range(len(header))]
    fmt = "  ".join("{:<%d}" % w if i < 2 or i == len(header) - 1 else
                    "{:>%d}" % w for i, w in enumerate(widths))
    print(fmt.format(*header).rstrip())
    print(fmt.format(*("-" * w for w in widths)).rstrip())
    for r in rows:
        print(fmt.format(*r).rstrip())
    sys.stdout.flush()


def ms(ns):
    v = ns / 1e6
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def rfmt(r, what):
    if r is None:
        return "-"
    return (f"{r:.0f}" if r >= 100 else f"{r:.1f}" if r >= 10 else
            f"{r:.2f}") + f" {what}"


# ---------------------------------------------------------------- running

class Bench:
    def __init__(self, args):
        self.a = args
        self.quick = args.quick
        self.tools = args.tools
        self.shm = args.shm
        self.dlrun = args.dlrun
        self.timeit = os.path.join(self.tools, "timeit")
        # A fixed, ordinary PATH so every launcher searches the same folders
        # for `true` and `sleep` whatever the caller's PATH holds (pyenv
        # shims and the like cost a failed execve per folder per rank).
        self.env = dict(os.environ)
        self.env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        # torchrun sets OMP_NUM_THREADS=1 for its workers and warns when it
        # does; give every launcher's ranks the same, and silence it.
        self.env["OMP_NUM_THREADS"] = "1"
        self.env.pop("PYTHONSTARTUP", None)
        self.mpirun = shutil.which("mpirun", path=self.env["PATH"])
        self.mpi_flags = ["--oversubscribe"]
        if os.geteuid() == 0:
            self.mpi_flags.insert(0, "--allow-run-as-root")
        self.torch_ok = subprocess.run(
            [PY, "-c", "import torch.distributed.run"], env=self.env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        self.torchrun = [PY, os.path.join(HERE, "torchrun-wrapper.py")]
        helptext = subprocess.run([self.dlrun, "run", "--help"], env=self.env,
                                  capture_output=True, text=True)
        self.tag = "--tag-output" in helptext.stdout + helptext.stderr

    # One timeit call: reps runs of cmd; returns [(elapsed_ns, end_ns, status)]
    # or None after recording the error.
    def timed(self, what, cmd, reps, warmup=0, out="/dev/null",
              err="/dev/null", keep_going=False, timeout=300):
        argv = [self.timeit, "-w", str(warmup), "-o", out, "-e", err]
        if keep_going:
            argv.append("-k")
        argv += [str(reps)] + cmd
        try:
            p = subprocess.run(argv, env=self.env, capture_output=True,
                               text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            fail(what, f"did not finish in {timeout} s: {' '.join(cmd)}")
            return None
        runs = [tuple(int(x) for x in line.split())
                for line in p.stdout.splitlines() if line.strip()]
        if p.returncode != 0 or len(runs) != reps:
            st = runs[-1][2] if runs else p.returncode
            tail = ""
            if err != "/dev/null" and os.path.exists(err):
                with open(err, errors="replace") as f:
                    tail = " | ".join(f.read().strip().splitlines()[-3:])
            fail(what, f"exit status {st}: {' '.join(cmd)}"
                 + (f" ({tail})" if tail else "") + p.stderr.strip())
            return None
        return runs

    def mpi(self, n, *prog, extra=()):
        return [self.mpirun] + self.mpi_flags + list(extra) + ["-np", str(n)] + list(prog)

    def have(self, what, tool):
        """Record an error when a comparison tool is missing."""
        ok = {"mpirun": self.mpirun is not None, "torchrun": self.torch_ok}[tool]
        if not ok:
            fail(what, f"{tool} is not installed (see bench/README.md)")
        return ok

    # ------------------------------------------------------- 1. launch

    def launch(self):
        ns_list = [1, 2, 4, 8, 16, 32, 64]
        torch_ns = [1] if self.quick else [1, 2, 4]
        fast_reps = 5 if self.quick else 20
        mpi_reps = 2 if self.quick else 5
        torch_reps = 1 if self.quick else 3
        floor = os.path.join(self.tools, "floor")
        rows, res = [], {}
        have_mpi = self.have("launch", "mpirun")
        have_torch = self.have("launch", "torchrun")
        for n in ns_list:
            cases = [("floor", [floor, str(n), "true"], fast_reps, 3),
                     ("dlrun", [self.dlrun, "-np", str(n), "--oversubscribe",
                                "true"], fast_reps, 3)]
            if have_mpi:
                cases.append(("mpirun", self.mpi(n, "true"), mpi_reps, 1))
            if have_torch and n in torch_ns:
                tr = self.torchrun + ["--standalone", "--nproc_per_node", str(n),
                                      "--no_python"]
                cases.append(("torchrun", tr + ["true"], torch_reps,
                              1 if n == torch_ns[0] else 0))
                # torchrun looks at its workers every --monitor_interval
                # (5 s by default), so `true` costs it at least 5 s; this row
                # shows what is left when it looks every 0.1 s.
                cases.append(("torchrun mon=0.1",
                              tr[:-1] + ["--monitor_interval", "0.1",
                                         "--no_python", "true"], torch_reps, 0))
            for tool, cmd, reps, warm in cases:
                log(f"launch: {tool} N={n} x{reps}")
                runs = self.timed(f"launch {tool} N={n}", cmd, reps, warm,
                                  timeout=60 + 30 * reps)
                if runs:
                    t = [r[0] for r in runs]
                    res[(tool, n)] = (statistics.median(t), min(t))
            d = res.get(("dlrun", n), (None, None))[0]
            for tool, *_ in cases:
                if (tool, n) not in res:
                    rows.append([tool, str(n), "ERROR", "", "", ""])
                    continue
                med, mn = res[(tool, n)]
                if tool == "floor":
                    r = "-"
                elif tool == "dlrun":
                    r = rfmt(ratio(med, res.get(("floor", n), (None,))[0]),
                             "dlrun/floor")
                else:
                    r = rfmt(ratio(med, d), f"{tool.split()[0]}/dlrun")
                rows.append([tool, str(n), ms(med), ms(mn), r, ""])
        table("1. launch latency: -np N true (ms; ratios of medians)",
              ["tool", "N", "median", "min", "ratio", ""], rows,
              "floor = bare fork/exec/wait-all (bench/floor.c)")

        def worst(num, den, pick):
            rs = [(ratio(res[(num, n)][0], res[(den, n)][0]), n)
                  for n in ns_list if (num, n) in res and (den, n) in res]
            return pick(rs) if rs else (None, None)
        r, n = worst("dlrun", "floor", max)
        goals.append(("launch: dlrun/floor <= 1.5x (every N)",
                      f"worst {r:.2f}x at N={n}" if r else "not measured",
                      None if r is None else r <= 1.5))
        r, n = worst("mpirun", "dlrun", min)
        goals.append(("launch: mpirun/dlrun >= 5x (every N)",
                      f"worst {r:.1f}x at N={n}" if r else "not measured",
                      None if r is None else r >= 5))
        r, n = worst("torchrun", "dlrun", min)
        goals.append(("launch: torchrun/dlrun >= 100x (N=%s)" %
                       ",".join(map(str, torch_ns)),
                      f"worst {r:.0f}x at N={n}" if r else "not measured",
                      None if r is None else r >= 100))
        r, n = worst("torchrun mon=0.1", "dlrun", min)
        if r:
            goals.append(("  (torchrun --monitor_interval 0.1/dlrun, no goal)",
                          f"worst {r:.0f}x at N={n}", "info"))

    # ------------------------------------------------------- 2. all-reduce

    def allreduce(self):
        reps = 1 if self.quick else 3
        have_mpi = self.have("allreduce", "mpirun")
        if not self.have("allreduce", "torchrun"):
            return
        script = [PY, ALLREDUCE]
        cases = [("dlrun", "-np 4", [self.dlrun, "-np", "4", "--oversubscribe"] + script),
                 ("torchrun", "--standalone", self.torchrun + [
                     "--standalone", "--nproc_per_node", "4", ALLREDUCE])]
        if have_mpi:
            port = free_port()
            cases += [("mpirun", "+ mpi-env.sh", self.mpi(
                4, os.path.join(HERE, "mpi-env.sh"), *script,
                extra=["-x", f"MASTER_PORT={port}"])),
                ("mpirun", "+ dlrun per-task", self.mpi(4, self.dlrun, *script))]
        res, rows = {}, []
        for tool, case, cmd in cases:
            log(f"allreduce: {tool} {case} x{reps}")
            out = os.path.join(self.shm, "allreduce.out")
            err = os.path.join(self.shm, "allreduce.err")
            times = []
            for _ in range(reps):   # one at a time: check each run's output
                open(err, "w").close()
                runs = self.timed(f"allreduce {tool} {case}", cmd, 1, out=out,
                                  err=err, timeout=180)
                if not runs:
                    break
                with open(out) as f:
                    oks = sum(1 for line in f if line.rstrip().endswith(" ok"))
                if oks != 4:
                    fail(f"allreduce {tool} {case}", f"{oks} of 4 ranks said ok")
                    break
                times.append(runs[0][0])
            if len(times) == reps:
                res[(tool, case)] = (statistics.median(times), min(times))
        d = res.get(("dlrun", "-np 4"), (None,))[0]
        for tool, case, _ in cases:
            if (tool, case) not in res:
                rows.append([tool, case, "ERROR", "", "", ""])
                continue
            med, mn = res[(tool, case)]
            r = "-" if tool == "dlrun" else rfmt(ratio(med, d), "x dlrun")
            rows.append([tool, case, ms(med), ms(mn), r, ""])
        table("2. launch + gloo all-reduce, 4 ranks of tests/e2e/allreduce.py (ms)",
              ["tool", "case", "median", "min", "ratio", ""], rows,
              "each rank imports torch (most of the time); every run's sum checked")
        for tool, case in (("torchrun", "--standalone"), ("mpirun", "+ mpi-env.sh")):
            r = ratio(res.get((tool, case), (None,))[0], d)
            if r:
                goals.append((f"  ({tool}/dlrun with all-reduce, no goal)",
                              f"{r:.2f}x", "info"))

    # ------------------------------------------------------- 3. output

    def throughput(self):
        per_rank = (64 if self.quick else 256) << 20
        total = 4 * per_rank
        reps = 1 if self.quick else 3
        w = os.path.join(self.tools, "writer")
        out = os.path.join(self.shm, "out")
        have_mpi = self.have("throughput", "mpirun")
        direct = ["sh", "-c", 'for r in 0 1 2 3; do "$0" "$1" $r & done; wait',
                  w, str(per_rank)]
        dl = [self.dlrun, "-np", "4", "--oversubscribe"]
        if self.tag:
            dl.insert(1, "--tag-output")
        cases = [("direct", "4 writers, no launcher", direct),
                 ("dlrun", "--tag-output" if self.tag else
                  "untagged (no --tag-output yet)", dl + [w, str(per_rank)])]
        if have_mpi:
            cases += [("mpirun", "untagged", self.mpi(4, w, str(per_rank))),
                      ("mpirun", "--tag-output", self.mpi(
                          4, w, str(per_rank), extra=["--tag-output"]))]
        res, rows = {}, []
        lc = os.path.join(self.tools, "linecheck")
        for tool, case, cmd in cases:
            log(f"throughput: {tool} {case} x{reps}")
            rates, bad, miss, reord = [], 0, 0, 0
            for _ in range(reps):
                runs = self.timed(f"throughput {tool} {case}", cmd, 1, out=out,
                                  timeout=300)
                if not runs:
                    break
                rates.append(total / runs[0][0])        # bytes/ns = GB/s
                chk = subprocess.run([lc, "4", str(per_rank // 64), out],
                                     capture_output=True, text=True)
                os.unlink(out)
                m = re.search(r"malformed=(\d+) missing=(-?\d+) reordered=(\d+)",
                              chk.stdout)
                if not m:
                    fail(f"throughput {tool} {case}", "linecheck: " + chk.stderr)
                    break
                bad += int(m.group(1))
                miss += int(m.group(2))
                reord += int(m.group(3))
            if len(rates) == reps:
                res[(tool, case)] = (statistics.median(rates), max(rates), bad,
                                     miss, reord)
        dr = res.get(cases[0][:2], (None,))[0]
        for tool, case, _ in cases:
            if (tool, case) not in res:
                rows.append([tool, case, "ERROR", "", "", "", ""])
                continue
            med, best, bad, miss, reord = res[(tool, case)]
            rows.append([tool, case, f"{med:.2f}", f"{best:.2f}",
                         "-" if tool == "direct" else rfmt(ratio(med, dr), "of direct"),
                         f"{bad}", f"{miss}/{reord}"])
        table(f"3. output throughput: 4 ranks x {per_rank >> 20} MiB of 64-byte "
              f"lines into a file on /dev/shm (GB/s = 1e9 B/s; {reps} run(s))",
              ["tool", "case", "median", "best", "ratio", "malformed",
               "missing/reordered"], rows,
              "malformed etc. summed over all runs; tag prefixes not counted in GB/s")
        k = ("dlrun", cases[1][1])
        if k in res:
            med, _, bad, miss, reord = res[k]
            note = "" if self.tag else " (untagged: ranks write the file directly)"
            goals.append(("output: dlrun >= 1 GB/s" + note, f"{med:.2f} GB/s",
                          med >= 1))
            goals.append(("output: dlrun 0 malformed lines", f"{bad} malformed, "
                          f"{miss} missing, {reord} reordered",
                          bad == 0 and miss == 0))
        else:
            goals.append(("output: dlrun >= 1 GB/s, 0 malformed", "not measured", None))

    # ------------------------------------------------------- 4. fail-fast

    def failfast(self):
        fr = os.path.join(HERE, "failrank.sh")
        stamp = os.path.join(self.shm, "stamp")
        cases = [("dlrun", "", 2 if self.quick else 5,
                  [self.dlrun, "-np", "4", "--oversubscribe"])]
        if self.have("failfast", "mpirun"):
            cases.append(("mpirun", "", 1 if self.quick else 3, self.mpi(4)))
        if self.have("failfast", "torchrun"):
            tr = self.torchrun + ["--standalone", "--nproc_per_node", "4"]
            cases.append(("torchrun", "default (monitor 5 s)", 1 if self.quick else 2,
                          tr + ["--no_python"]))
            cases.append(("torchrun", "--monitor_interval 0.1", 1 if self.quick else 2,
                          tr + ["--monitor_interval", "0.1", "--no_python"]))
        rows, res = [], {}
        for tool, case, reps, launcher in cases:
            log(f"failfast: {tool} {case} x{reps}")
            # the sleeper's path is the marker: unique to this tool and run
            sleeper = os.path.join(self.tools, "sleeper-" + re.sub(
                r"\W", "", tool + case))
            if not os.path.exists(sleeper):
                os.symlink(shutil.which("sleep", path=self.env["PATH"]), sleeper)
            lat, total, left, codes = [], [], 0, set()
            for _ in range(reps):
                if os.path.exists(stamp):
                    os.unlink(stamp)
                runs = self.timed(f"failfast {tool} {case}",
                                  launcher + [fr, stamp, sleeper], 1,
                                  keep_going=True, timeout=120)
                if not runs:
                    break
                el, end, st = runs[0]
                codes.add(st)
                n = len(marked(sleeper))
                if n:       # left at return: see whether they go on their own
                    time.sleep(2)
                    still = marked(sleeper)
                    log(f"failfast: {tool}: {n} left at return, {len(still)} after 2 s")
                    for pid, _ in still:    # ours: started by this run
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                left += n
                try:
                    with open(stamp) as f:
                        s, _, frac = f.read().strip().partition(".")
                    t1 = int(s) * 10**9 + int(frac.ljust(9, "0")[:9])
                except (OSError, ValueError):
                    fail(f"failfast {tool} {case}", "rank 1 wrote no timestamp")
                    break
                lat.append(end - t1)
                total.append(el)
            if len(lat) == reps:
                res[(tool, case)] = (statistics.median(lat), min(lat),
                                     statistics.median(total), left, codes)
        d = res.get(("dlrun", ""), (None,))[0]
        for tool, case, _, _ in cases:
            if (tool, case) not in res:
                rows.append([tool, case, "ERROR", "", "", "", "", ""])
                continue
            med, mn, tot, left, codes = res[(tool, case)]
            rows.append([tool, case or "-np 4", ms(med), ms(mn),
                         "-" if tool == "dlrun" else rfmt(ratio(med, d), "x dlrun"),
                         ms(tot), str(left), ",".join(map(str, sorted(codes)))])
        table("4. fail-fast: rank 1 exits 3 after 0.5 s, 3 ranks sleep 60 "
              "(ms from rank 1's exit to the launcher's return)",
              ["tool", "case", "median", "min", "ratio", "total",
               "left", "exit"], rows,
              "total: whole run; left: marked sleepers alive (not zombie) "
              "at return, all runs; exit: launcher's status")
        if ("dlrun", "") in res:
            med, _, _, left, codes = res[("dlrun", "")]
            goals.append(("fail-fast: dlrun < 100 ms", f"{med / 1e6:.1f} ms", med < 100e6))
            goals.append(("fail-fast: dlrun leaves no process, exits 3",
                          f"{left} left, exit {','.join(map(str, sorted(codes)))}",
                          left == 0 and codes == {3}))
        else:
            goals.append(("fail-fast: dlrun < 100 ms", "not measured", None))

    # ------------------------------------------------------- 5. RSS

    def rss(self):
        n = "64"
        cases = [("floor", [os.path.join(self.tools, "floor"), n, "sleep", "1"], 1),
                 ("dlrun", [self.dlrun, "-np", n, "--oversubscribe", "sleep", "1"],
                  1 if self.quick else 3)]
        if self.have("rss", "mpirun"):
            cases.append(("mpirun", self.mpi(64, "sleep", "1"), 1))
        if self.have("rss", "torchrun"):
            cases.append(("torchrun", self.torchrun + [
                "--standalone", "--nproc_per_node", n, "--monitor_interval", "0.1",
                "--no_python", "sleep", "1"], 1))
        rows, res = [], {}
        for tool, cmd, reps in cases:
            log(f"rss: {tool} x{reps}")
            hwm, maxrss = [], []
            for _ in range(reps):
                r = peak_rss(cmd, self.env, 120)
                if isinstance(r, str):
                    fail(f"rss {tool}", r)
                    break
                hwm.append(r[0])
                maxrss.append(r[1])
            if len(hwm) == reps:
                res[tool] = (statistics.median(hwm), min(hwm), max(maxrss))
        d = res.get("dlrun", (None,))[0]
        for tool, _, _ in cases:
            if tool not in res:
                rows.append([tool, "64 x sleep 1", "ERROR", "", "", "", ""])
                continue
            med, mn, mx = res[tool]
            rows.append([tool, "64 x sleep 1", f"{med / 1024:.1f}", f"{mn / 1024:.1f}",
                         "-" if tool == "dlrun" else rfmt(ratio(med, d), "x dlrun"),
                         f"{mx / 1024:.1f}"])
        table("5. peak RSS of the launcher process with 64 ranks of `sleep 1` (MiB)",
              ["tool", "case", "median", "min", "ratio", "wait4 maxrss", ""],
              [r + [""] for r in rows],
              "median/min: VmHWM of the launcher alone (sampled from "
              "/proc/PID/status every 10 ms);\nwait4 maxrss: what GNU time -v "
              "prints, the largest of the launcher and every process it reaped")
        if d is not None:
            goals.append(("RSS: dlrun < 8 MiB with 64 ranks", f"{d / 1024:.1f} MiB",
                          d < 8 * 1024))
        else:
            goals.append(("RSS: dlrun < 8 MiB with 64 ranks", "not measured", None))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def marked(marker):
    """Live (not zombie) processes whose command line holds marker."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{d}/stat") as f:
                state = f.read().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if marker in cmd and state != "Z":
            found.append((int(d), cmd))
    return found


def peak_rss(cmd, env, timeout):
    """(VmHWM of the process itself in KiB, wait4 ru_maxrss in KiB), or an
    error string.  VmHWM is sampled while it runs (a high-water mark, so a
    late sample holds the peak so far); ru_maxrss covers its children too."""
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    hwm, t0 = 0, time.monotonic()
    while True:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        hwm = max(hwm, int(line.split()[1]))
        except OSError:
            pass
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            p.returncode = os.waitstatus_to_exitcode(status)
            break
        if time.monotonic() - t0 > timeout:
            p.kill()
            p.wait()
            return f"did not finish in {timeout} s"
        time.sleep(0.01)
    if p.returncode != 0:
        return f"exit status {p.returncode}: {' '.join(cmd)}"
    if hwm == 0:
        return "could not read VmHWM"
    return hwm, ru.ru_maxrss


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dlrun", required=True)
    ap.add_argument("--tools", required=True, help="folder of the built helpers")
    ap.add_argument("--shm", required=True, help="scratch folder on tmpfs")
    ap.add_argument("--only", default="launch,allreduce,throughput,failfast,rss",
                    help="comma-separated subset, in this order")
    a = ap.parse_args()
    b = Bench(a)
    t0 = time.monotonic()
    print(f"dlrun benchmarks ({'quick' if a.quick else 'full'}), "
          f"{time.strftime('%Y-%m-%d %H:%M %Z')}, {os.cpu_count()} CPUs, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"dlrun: {a.dlrun}; output tagging: "
          f"{'--tag-output' if b.tag else 'not available, throughput runs untagged'}")
    for name in a.only.split(","):
        getattr(b, name)()
    print()
    print("== summary (goals are reported, never enforced)")
    w = max(len(g[0]) for g in goals) if goals else 0
    for g, fig, met in goals:
        verdict = {True: "met", False: "NOT MET", None: "n/a",
                   "info": ""}[met]
        print(f"{g:<{w}}  {verdict:<7}  {fig}")
    print(f"took {time.monotonic() - t0:.0f} s; load average at the end "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if errors:
        print()
        print("could not run:")
        for e in errors:
            print(f"  {e}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
