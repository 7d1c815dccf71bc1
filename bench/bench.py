#!/usr/bin/python3
"""dlrun's benchmarks against the tools users would pick instead.

Run through bench/run.sh, which builds the C helpers (floor, timeit, writer,
linecheck) into a temporary folder and passes it here.  Debian's Python,
standard library only.  All timing is done by timeit (C), one run per call,
so Python's own cost of starting a process never enters a figure.

Timings never gate anything.  The exit status is 1 only when a benchmark
could not run at all: a tool missing, dlrun or the floor failing or hanging,
a comparison tool failing every run, a wrong all-reduce sum.  A comparison
tool that hangs in some runs (mpirun does, see README) is reported in its
row and the summary, not counted as an error.

Each benchmark prints one table (tool, N or case, median, min, ratios,
notes) and the goals go to a summary at the end.  See bench/README.md.
"""
import argparse
import os
import re
import resource
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
BENCHES = ["launch", "allreduce", "throughput", "failfast", "rss", "ranks"]

errors = []         # what could not run: makes the exit status 1
goals = []          # (goal, figure, verdict: True/False, None unmeasured, "info")
notes = []          # hangs and other things seen on the way


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def fail(what, why):
    errors.append(f"{what}: {why}")
    log(f"bench: ERROR {what}: {why}")


# ---------------------------------------------------------------- format

def table(title, header, rows, note=None):
    """Print rows (lists of str) under header; text columns (the first two
    and the last) left-aligned, figures right-aligned."""
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
    if ns is None:
        return "-"
    v = ns / 1e6
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def rfmt(r):
    if r is None:
        return "-"
    return f"{r:.0f}" if r >= 100 else f"{r:.1f}" if r >= 10 else f"{r:.2f}"


class Result:
    """The finished runs of one case: elapsed ns, end time (CLOCK_REALTIME
    ns) and exit status of each, and how many runs hung."""

    def __init__(self):
        self.runs, self.hangs = [], 0

    @property
    def times(self):
        return [r[0] for r in self.runs]

    @property
    def med(self):
        return statistics.median(self.times) if self.runs else None

    @property
    def min(self):
        return min(self.times) if self.runs else None

    def hang_note(self):
        if not self.hangs:
            return ""
        return f"hung {self.hangs} of {self.hangs + len(self.runs)} runs (killed)"


# ---------------------------------------------------------------- running

class Bench:
    def __init__(self, args):
        self.quick = args.quick
        self.tools = args.tools
        self.shm = args.shm
        self.dlrun = args.dlrun
        self.timeit = os.path.join(self.tools, "timeit")
        self.hung = set()       # the cases ("bench tool case") that hung
        # A fixed, ordinary PATH so every launcher searches the same folders
        # for `true` and `sleep` whatever the caller's PATH holds (pyenv
        # shims and the like cost a failed execve per folder per rank).
        self.env = dict(os.environ)
        self.env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        # torchrun sets OMP_NUM_THREADS=1 for its workers and warns when it
        # does; give every launcher's ranks the same, and silence it.
        self.env["OMP_NUM_THREADS"] = "1"
        # Unbuffered Python writes a line's text and its newline apart; a
        # launcher that relays output write by write (mpirun) then mixes
        # lines from different ranks.  Not a default: keep it out.
        self.env.pop("PYTHONUNBUFFERED", None)
        self.gnu_time = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
        self.mpirun = shutil.which("mpirun", path=self.env["PATH"])
        self.mpi_flags = ["--oversubscribe"]
        if os.geteuid() == 0:
            self.mpi_flags.insert(0, "--allow-run-as-root")
        self.torch_ok = subprocess.run(
            [PY, "-c", "import torch.distributed.run"], env=self.env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        self.torchrun = [PY, os.path.join(HERE, "torchrun-wrapper.py")]
        h = subprocess.run([self.dlrun, "run", "--help"], env=self.env,
                           capture_output=True, text=True)
        self.tag = "--tag-output" in h.stdout + h.stderr
        # dlrun binds ranks to cores by default in launch mode, which means
        # reading the machine's topology (hwloc) on every launch; a second
        # row shows dlrun without it, when this dlrun has the options.
        self.nobind = (["--bind-to", "none", "--gpu-bind", "none"]
                       if "--bind-to" in h.stdout and "--gpu-bind" in h.stdout
                       else None)

    def timed(self, what, cmd, reps, warmup=0, out="/dev/null", err="/dev/null",
              expect=0, run_timeout=60, may_hang=False, max_hangs=2):
        """Run cmd reps times (after warmup untimed runs), one timeit call
        each; returns a Result, or None after recording an error.

        expect: the exit status every run must have (None: any).  A run past
        run_timeout is killed with its process group; for a comparison tool
        (may_hang) that is counted and reported, and after max_hangs the case
        stops; for dlrun and the floor it is an error."""
        res = Result()
        for i in range(reps):
            argv = [self.timeit, "-k", "-t", str(run_timeout), "-o", out,
                    "-e", err, "-w", str(warmup if i == 0 else 0), "1"] + cmd
            try:
                p = subprocess.run(argv, env=self.env, capture_output=True,
                                   text=True, timeout=(warmup + 1) * run_timeout + 30)
            except subprocess.TimeoutExpired:   # timeit itself stuck: never seen
                fail(what, f"timeit did not return: {' '.join(cmd)}")
                return None
            line = p.stdout.split()
            if p.returncode != 0 or len(line) != 3:
                fail(what, f"timeit failed ({p.returncode}): {p.stderr.strip()}")
                return None
            el, end, st = int(line[0]), int(line[1]), line[2]
            if st == "timeout":
                res.hangs += 1
                if not may_hang:
                    fail(what, f"hung (killed after {run_timeout} s): {' '.join(cmd)}")
                    return None
                log(f"bench: {what}: hung, killed after {run_timeout} s")
                if res.hangs >= max_hangs:
                    break
                continue
            if expect is not None and int(st) != expect:
                tail = ""
                if err != "/dev/null" and os.path.exists(err):
                    with open(err, errors="replace") as f:
                        tail = " | ".join(f.read().strip().splitlines()[-3:])
                fail(what, f"exit status {st}, not {expect}: {' '.join(cmd)}"
                     + (f" ({tail})" if tail else ""))
                return None
            res.runs.append((el, end, int(st)))
        if res.hangs:       # a finding about that tool, not an error
            notes.append(f"{what}: {res.hang_note()}")
            self.hung.add(what)
        return res

    def interleaved(self, n, cases, reps):
        """Run cases (tool, cmd, reps, warmup, may_hang) one run each in
        turn, reps rounds; {tool: Result} of those that never failed."""
        acc, failed = {c[0]: Result() for c in cases}, set()
        for i in range(reps):
            for tool, cmd, _, warm, _ in cases:
                if tool in failed:
                    continue
                r = self.timed(f"launch {tool} N={n}", cmd, 1,
                               warm if i == 0 else 0, run_timeout=5)
                if r is None:
                    failed.add(tool)
                    continue
                acc[tool].runs += r.runs
        return {t: r for t, r in acc.items() if t not in failed and r.runs}

    def missing(self, bench, tool, case):
        """The row text of a case with no figure: it hung, or it failed."""
        return "hung" if f"{bench} {tool} {case}" in self.hung else "ERROR"

    def mpi(self, n, *prog, extra=()):
        return ([self.mpirun] + self.mpi_flags + list(extra) + ["-np", str(n)]
                + list(prog))

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
        fast_reps = 7 if self.quick else 21
        mpi_reps = 3 if self.quick else 5
        torch_reps = 1 if self.quick else 3
        floor = os.path.join(self.tools, "floor")
        have_mpi = self.have("launch", "mpirun")
        have_torch = self.have("launch", "torchrun")
        rows, res, hung = [], {}, {}
        for n in ns_list:
            cases = [("floor", [floor, str(n), "true"], fast_reps, 3, False),
                     ("dlrun", [self.dlrun, "-np", str(n), "--oversubscribe",
                                "true"], fast_reps, 3, False)]
            if self.nobind:
                cases.append(("dlrun no-bind", [self.dlrun, "-np", str(n),
                              "--oversubscribe"] + self.nobind + ["true"],
                              fast_reps, 3, False))
            if have_mpi:
                cases.append(("mpirun", self.mpi(n, "true"), mpi_reps, 1, True))
            if have_torch and n in torch_ns:
                tr = self.torchrun + ["--standalone", "--nproc_per_node", str(n)]
                first = n == torch_ns[0]
                cases.append(("torchrun", tr + ["--no_python", "true"],
                              torch_reps, 1 if first else 0, True))
                # torchrun looks at its workers every --monitor_interval
                # (5 s by default), so even `true` costs it 5 s; this row
                # shows what is left when it looks every 0.1 s.
                cases.append(("torchrun mon=0.1", tr + [
                    "--monitor_interval", "0.1", "--no_python", "true"],
                    torch_reps, 0, True))
            # The floor and dlrun run in turn, one run each, so that a
            # burst of other work on the machine hits both alike: their
            # ratio is the figure that matters, and a few milliseconds
            # move with the load.
            fast = [c for c in cases if not c[4]]
            log(f"launch: {', '.join(c[0] for c in fast)} N={n} x{fast_reps}, in turn")
            for tool, r in self.interleaved(n, fast, fast_reps).items():
                res[(tool, n)] = r
            for tool, cmd, reps, warm, may_hang in cases:
                if not may_hang:
                    continue
                log(f"launch: {tool} N={n} x{reps}")
                # mpirun takes under 1 s even at N=64 when it returns at all
                r = self.timed(f"launch {tool} N={n}", cmd, reps, warm,
                               run_timeout=60 if tool.startswith("torch") else 5,
                               may_hang=may_hang, max_hangs=1 if self.quick else 2)
                if r and r.runs:
                    res[(tool, n)] = r
                elif r:
                    hung[(tool, n)] = r
            for tool, *_ in cases:
                r = res.get((tool, n))
                if not r:
                    h = hung.get((tool, n))
                    rows.append([tool, str(n), "hung" if h else "ERROR", "", "", "",
                                 "", h.hang_note() if h else ""])
                    continue
                base = "floor" if tool.startswith("dlrun") else "dlrun"
                b = res.get((base, n))
                if tool == "floor" or not b:
                    rm = rn = what = "-"
                else:
                    rm, rn = rfmt(ratio(r.med, b.med)), rfmt(ratio(r.min, b.min))
                    what = f"{tool.split()[0]}/{base}"
                rows.append([tool, str(n), ms(r.med), ms(r.min), rm, rn, what,
                             r.hang_note()])
        table("1. launch latency: -np N true (ms)",
              ["tool", "N", "median", "min", "ratio", "min ratio", "of", "notes"],
              rows, "floor = bare fork/exec/wait-all (bench/floor.c); ratio = of "
              "the medians, min ratio = of the minimums; floor and dlrun runs "
              "alternate (one each in turn)"
              + ("\ndlrun no-bind = dlrun --bind-to none --gpu-bind none (no "
                 "topology read)" if self.nobind else ""))

        hung_all = {**res, **hung}

        def worst(num, den, pick):
            rs = [(ratio(res[(num, n)].med, res[(den, n)].med),
                   ratio(res[(num, n)].min, res[(den, n)].min), n)
                  for n in ns_list if (num, n) in res and (den, n) in res]
            return pick(rs) if rs else None

        def goal(text, num, den, pick, ok):
            w = worst(num, den, pick)
            if not w:
                goals.append((text, "not measured", None))
                return
            hung = [str(n) for n in ns_list
                    if (num, n) in hung_all and hung_all[(num, n)].hangs]
            fig = (f"worst {rfmt(w[0])}x at N={w[2]} (of minimums {rfmt(w[1])}x)"
                   + (f"; {num} also hung at N={','.join(hung)}" if hung else ""))
            goals.append((text, fig, ok(w[0])))

        goal("launch: dlrun/floor <= 1.5x, every N", "dlrun", "floor", max,
             lambda r: r <= 1.5)
        goal("launch: mpirun/dlrun >= 5x, every N", "mpirun", "dlrun", min,
             lambda r: r >= 5)
        goal(f"launch: torchrun/dlrun >= 100x, N={','.join(map(str, torch_ns))}",
             "torchrun", "dlrun", min, lambda r: r >= 100)
        w = worst("dlrun no-bind", "floor", max)
        if w:
            goals.append(("  (dlrun --bind-to none --gpu-bind none / floor)",
                          f"worst {rfmt(w[0])}x at N={w[2]} (of minimums "
                          f"{rfmt(w[1])}x)", "info"))
        w = worst("torchrun mon=0.1", "dlrun", min)
        if w:
            goals.append(("  (torchrun --monitor_interval 0.1 / dlrun)",
                          f"worst {rfmt(w[0])}x at N={w[2]}", "info"))

    # ------------------------------------------------------- 2. all-reduce

    def allreduce(self):
        reps = 1 if self.quick else 3
        have_mpi = self.have("allreduce", "mpirun")
        if not self.have("allreduce", "torchrun"):
            return
        script = [PY, ALLREDUCE]
        cases = [("dlrun", "-np 4", [self.dlrun, "-np", "4", "--oversubscribe"]
                  + script),
                 ("torchrun", "--standalone", self.torchrun + [
                     "--standalone", "--nproc_per_node", "4", ALLREDUCE])]
        if have_mpi:
            cases += [("mpirun", "+ mpi-env.sh", self.mpi(
                4, os.path.join(HERE, "mpi-env.sh"), *script,
                extra=["-x", f"MASTER_PORT={free_port()}"])),
                ("mpirun", "+ dlrun per-task", self.mpi(4, self.dlrun, *script))]
        res, rows = {}, {}
        out = os.path.join(self.shm, "allreduce.out")
        err = os.path.join(self.shm, "allreduce.err")
        for tool, case, cmd in cases:
            log(f"allreduce: {tool} {case} x{reps}")
            r = Result()
            for _ in range(reps):       # one at a time: check each run's sum
                open(err, "w").close()
                one = self.timed(f"allreduce {tool} {case}", cmd, 1, out=out,
                                 err=err, run_timeout=120, may_hang=tool != "dlrun")
                if not one or not one.runs:
                    break
                with open(out, errors="replace") as f:     # count, not lines:
                    oks = len(re.findall(r"sum 10 ok", f.read()))  # see env
                if oks != 4:
                    fail(f"allreduce {tool} {case}", f"{oks} of 4 ranks said ok")
                    break
                r.runs += one.runs
            if len(r.runs) == reps:
                res[(tool, case)] = r
        d = res.get(("dlrun", "-np 4"))
        table_rows = []
        for tool, case, _ in cases:
            r = res.get((tool, case))
            if not r:
                table_rows.append([tool, case, self.missing("allreduce", tool, case),
                                   "", "", ""])
                continue
            table_rows.append([tool, case, ms(r.med), ms(r.min),
                               "-" if tool == "dlrun" or not d else
                               rfmt(ratio(r.med, d.med)), ""])
        table("2. launch + gloo all-reduce: 4 ranks of tests/e2e/allreduce.py (ms)",
              ["tool", "case", "median", "min", "x dlrun", ""], table_rows,
              "each rank imports torch (most of the time); every run's sum is checked")
        for tool, case in (("torchrun", "--standalone"), ("mpirun", "+ mpi-env.sh")):
            r = res.get((tool, case))
            if r and d:
                goals.append((f"  (all-reduce: {tool}/dlrun)",
                              f"{rfmt(ratio(r.med, d.med))}x", "info"))

    # ------------------------------------------------------- 3. output

    def throughput(self):
        per_rank = (64 if self.quick else 256) << 20
        total = 4 * per_rank
        reps = 1 if self.quick else 3
        w = os.path.join(self.tools, "writer")
        out = os.path.join(self.shm, "out")
        have_mpi = self.have("throughput", "mpirun")
        # "direct": the 4 writers share the file with no launcher between
        direct = ["sh", "-c", 'for r in 0 1 2 3; do "$0" "$1" $r & done; wait',
                  w, str(per_rank)]
        dl = [self.dlrun, "-np", "4", "--oversubscribe"]
        if self.tag:
            dl.append("--tag-output")
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
            # mpirun relays at well under 0.1 GB/s: 20 s a run; one is enough
            n_runs = 1 if tool == "mpirun" else reps
            log(f"throughput: {tool} {case} x{n_runs}")
            r, counts = Result(), [0, 0, 0]
            for _ in range(n_runs):
                one = self.timed(f"throughput {tool} {case}", cmd, 1, out=out,
                                 run_timeout=120, may_hang=tool == "mpirun")
                if not one or not one.runs:
                    break
                chk = subprocess.run([lc, "4", str(per_rank // 64), out],
                                     capture_output=True, text=True)
                os.unlink(out)
                m = re.search(r"malformed=(\d+) missing=(-?\d+) reordered=(\d+)",
                              chk.stdout)
                if not m:
                    fail(f"throughput {tool} {case}", "linecheck: " + chk.stderr)
                    break
                counts = [c + int(g) for c, g in zip(counts, m.groups())]
                r.runs += one.runs
            if len(r.runs) == n_runs:
                res[(tool, case)] = (r, counts)
        dr = res.get(cases[0][:2])
        for tool, case, _ in cases:
            if (tool, case) not in res:
                rows.append([tool, case, self.missing("throughput", tool, case),
                             "", "", "", ""])
                continue
            r, (bad, miss, reord) = res[(tool, case)]
            rows.append([tool, case, f"{total / r.med:.2f}", f"{total / r.min:.2f}",
                         "-" if tool == "direct" or not dr else
                         rfmt(ratio(dr[0].med, r.med)), f"{bad}",
                         f"{miss}/{reord}"])
        table(f"3. output throughput: 4 ranks x {per_rank >> 20} MiB of 64-byte "
              f"lines into a file on /dev/shm ({reps} run{'s' if reps > 1 else ''}"
              f"{', mpirun 1' if reps > 1 else ''})",
              ["tool", "case", "GB/s med", "GB/s best", "x direct", "malformed",
               "missing/reordered"], rows,
              "GB/s = 1e9 bytes of the ranks' own output per second (tags not "
              "counted); line counts summed over all runs")
        k = ("dlrun", cases[1][1])
        if k in res:
            r, (bad, miss, reord) = res[k]
            how = "tagged" if self.tag else "untagged"
            goals.append((f"output: dlrun ({how}) >= 1 GB/s",
                          f"{total / r.med:.2f} GB/s (best {total / r.min:.2f}; "
                          f"direct {total / dr[0].med:.2f})" if dr else
                          f"{total / r.med:.2f} GB/s", total / r.med >= 1))
            goals.append(("output: dlrun, 0 malformed lines",
                          f"{bad} malformed, {miss} missing, {reord} reordered",
                          bad == 0 and miss == 0))
        else:
            goals.append(("output: dlrun >= 1 GB/s, 0 malformed", "not measured",
                          None))

    # ------------------------------------------------------- 4. fail-fast

    def failfast(self):
        fr = os.path.join(HERE, "failrank.sh")
        stamp = os.path.join(self.shm, "stamp")
        cases = [("dlrun", "-np 4", 2 if self.quick else 5,
                  [self.dlrun, "-np", "4", "--oversubscribe"])]
        if self.have("failfast", "mpirun"):
            cases.append(("mpirun", "-np 4", 1 if self.quick else 3, self.mpi(4)))
        if self.have("failfast", "torchrun"):
            tr = self.torchrun + ["--standalone", "--nproc_per_node", "4"]
            cases.append(("torchrun", "default (monitor 5 s)", 1 if self.quick else 2,
                          tr + ["--no_python"]))
            cases.append(("torchrun", "--monitor_interval 0.1",
                          1 if self.quick else 2,
                          tr + ["--monitor_interval", "0.1", "--no_python"]))
        rows, res = [], {}
        for tool, case, reps, launcher in cases:
            log(f"failfast: {tool} {case} x{reps}")
            # the sleeper's path is the marker: unique to this tool and run
            sleeper = os.path.join(self.tools, "sleeper-" + re.sub(
                r"\W", "", tool + case))
            if not os.path.exists(sleeper):
                os.symlink(shutil.which("sleep", path=self.env["PATH"]), sleeper)
            lat, r, left, later, codes = [], Result(), 0, 0, set()
            for _ in range(reps):
                if os.path.exists(stamp):
                    os.unlink(stamp)
                one = self.timed(f"failfast {tool} {case}",
                                 launcher + [fr, stamp, sleeper], 1, expect=None,
                                 run_timeout=90, may_hang=tool != "dlrun")
                if not one or not one.runs:
                    break
                el, end, st = one.runs[0]
                codes.add(st)
                n = len(marked(sleeper))
                if n:       # left at return: do they go away on their own?
                    time.sleep(2)
                    still = marked(sleeper)
                    later += len(still)
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
                r.runs += one.runs
            if len(lat) == reps:
                res[(tool, case)] = (lat, r, left, later, codes)
        d = res.get(cases[0][:2])
        for tool, case, _, _ in cases:
            if (tool, case) not in res:
                rows.append([tool, case, self.missing("failfast", tool, case),
                             "", "", "", "", "", ""])
                continue
            lat, r, left, later, codes = res[(tool, case)]
            med = statistics.median(lat)
            rows.append([tool, case, ms(med), ms(min(lat)),
                         "-" if tool == "dlrun" or not d else
                         rfmt(ratio(med, statistics.median(d[0]))),
                         ms(r.med), f"{left}/{later}",
                         ",".join(map(str, sorted(codes))), ""])
        table("4. fail-fast: rank 1 exits 3 after 0.5 s, 3 ranks sleep 60 "
              "(ms from rank 1's exit to the launcher's return)",
              ["tool", "case", "median", "min", "x dlrun", "whole run",
               "left", "exit", ""], rows,
              "left: sleepers alive (not zombies) at the launcher's return / "
              "still alive 2 s later, all runs;\nexit: the launcher's status")
        if d:
            lat, _, left, later, codes = d
            med = statistics.median(lat)
            goals.append(("fail-fast: dlrun < 100 ms", f"{med / 1e6:.1f} ms "
                          f"(min {min(lat) / 1e6:.1f})", med < 100e6))
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
        if self.nobind:
            cases.append(("dlrun no-bind", [self.dlrun, "-np", n, "--oversubscribe"]
                          + self.nobind + ["sleep", "1"], 1 if self.quick else 3))
        if self.have("rss", "mpirun"):
            cases.append(("mpirun", self.mpi(64, "sleep", "1"), 1))
        if self.have("rss", "torchrun"):
            # monitor 0.1 s: the figure is the same, the run 4 s shorter
            cases.append(("torchrun", self.torchrun + [
                "--standalone", "--nproc_per_node", n, "--monitor_interval", "0.1",
                "--no_python", "sleep", "1"], 1))
        rows, res = [], {}
        for tool, cmd, reps in cases:
            log(f"rss: {tool} x{reps}")
            hwm, maxrss = [], []
            for _ in range(reps):
                r = peak_rss(cmd, self.env, 120, self.gnu_time, self.shm)
                if isinstance(r, str):
                    fail(f"rss {tool}", r)
                    break
                hwm.append(r[0])
                maxrss.append(r[1])
            if len(hwm) == reps:
                res[tool] = (statistics.median(hwm), min(hwm),
                             max(maxrss) if self.gnu_time else None)
        d = res.get("dlrun", (None,))[0]
        for tool, _, _ in cases:
            if tool not in res:
                rows.append([tool, "64 x sleep 1", "ERROR", "", "", "", ""])
                continue
            med, mn, mx = res[tool]
            rows.append([tool, "64 x sleep 1", f"{med / 1024:.1f}", f"{mn / 1024:.1f}",
                         "-" if tool == "dlrun" else rfmt(ratio(med, d)),
                         f"{mx / 1024:.1f}" if mx else "-", ""])
        table("5. peak RSS of the launcher with 64 ranks of `sleep 1` (MiB)",
              ["tool", "case", "median", "min", "x dlrun", "GNU time", ""],
              rows, "median/min: VmHWM of the launcher process alone (read from "
              "/proc/PID/status every 10 ms while it runs);\nGNU time: its "
              "\"Maximum resident set size\", the largest of the launcher and "
              "every process it reaped" + ("" if self.gnu_time else
                                           " (/usr/bin/time missing: apt-get install time)"))
        if d is not None:
            goals.append(("RSS: dlrun < 8 MiB with 64 ranks", f"{d / 1024:.1f} MiB",
                          d < 8 * 1024))
        else:
            goals.append(("RSS: dlrun < 8 MiB with 64 ranks", "not measured", None))

    # ------------------------------------------- 6. RSS per local rank

    def ranks(self):
        sizes = [1000] if self.quick else [1000, 4000]
        # dlrun holds 2 files per rank (and raises its soft limit itself);
        # mpirun needs more and does not
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        sleeper = os.path.join(self.shm, f"dlrun-bench-rank-{os.getpid()}")
        os.symlink(shutil.which("sleep", path=self.env["PATH"]), sleeper)
        cases = [("dlrun", lambda n: [self.dlrun, "-np", str(n), "--oversubscribe",
                                      sleeper, "600"])]
        if self.have("ranks", "mpirun"):
            cases.append(("mpirun", lambda n: self.mpi(n, sleeper, "600")))
        res = {}
        # mpirun starts ranks ever slower as they add up (1,000 in 8-20 s
        # here, under 1,600 of 4,000 in 4 minutes): it is measured with
        # what it has by then
        limit = 240
        for n in sizes:
            if hard != resource.RLIM_INFINITY and hard < 4 * n + 64:
                notes.append(f"ranks N={n}: skipped, the hard open-file limit "
                             f"{hard} is below {4 * n + 64}")
                continue
            for tool, cmd in cases:
                log(f"ranks: {tool} N={n}")
                r = ranks_rss(cmd(n), n, sleeper, self.env, limit)
                if isinstance(r, str):
                    fail(f"ranks {tool} N={n}", r)
                    continue
                if r[2] is None:
                    if tool == "dlrun":
                        fail(f"ranks dlrun N={n}", f"only {r[3]} ranks up in {limit} s")
                        continue
                    notes.append(f"ranks {tool} N={n}: {r[3]} of {n} ranks up "
                                 f"after {limit} s (measured then, stopped)")
                res[tool, n] = r
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        os.unlink(sleeper)
        rows = []
        for n in sizes:
            for tool, _ in cases:
                if (tool, n) not in res:
                    continue
                rss, hwm, up, k = res[tool, n]
                d = res.get(("dlrun", n))
                rows.append([tool, str(n) if up is not None else f"{k} of {n}",
                             f"{rss / 1024:.1f}", f"{hwm / 1024:.1f}",
                             f"{rss / k:.1f}", f"{hwm / k:.1f}",
                             "-" if tool == "dlrun" or not d else
                             rfmt(ratio(rss / k, d[0] / d[3])),
                             f"{up:.1f}" if up is not None else f"> {limit}",
                             ""])
        table("6. RSS of the launcher with N ranks of `sleep` on this host",
              ["tool", "N", "steady MiB", "peak MiB", "KiB/rank", "peak KiB/rank",
               "x dlrun", "start s", ""], rows,
              "steady: VmRSS of the launcher process (all its threads) 1 s after the "
              "N-th rank is up; peak: its VmHWM then;\nKiB/rank = steady / ranks "
              "up; start s: from the launcher's start to the N-th rank up (\"K of N\": "
              f"only K up after {limit} s, measured then)")
        for n in sizes:
            d, m = res.get(("dlrun", n)), res.get(("mpirun", n))
            if d:
                goals.append((f"RSS per local rank, N={n}: dlrun <= mpirun",
                              f"dlrun {d[0] / n:.1f} KiB (peak {d[1] / n:.1f}), "
                              + (f"mpirun {m[0] / m[3]:.1f} KiB (peak {m[1] / m[3]:.1f})"
                                 + ("" if m[2] is not None else f", {m[3]} ranks up")
                                 if m else "mpirun not measured"),
                              d[0] / n <= m[0] / m[3] if m else None))


def ranks_rss(cmd, n, sleeper, env, timeout):
    """(VmRSS 1 s after n processes of sleeper run below the launcher,
    VmHWM then, seconds until they were up, ranks up), KiB, or an error
    string.  A launcher that has not started them all after timeout s is
    measured as it is (seconds None, the ranks it has).  The launcher then
    gets SIGTERM, and what is left of the sleepers SIGKILL."""
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    t0, up, k = time.monotonic(), None, 0
    try:
        while up is None:
            if p.poll() is not None:
                return f"exit status {p.returncode} before {n} ranks ran: {' '.join(cmd[:6])}"
            k = len(ranks_of(sleeper))
            if k >= n:
                up = time.monotonic() - t0
            elif time.monotonic() - t0 > timeout:
                break
            else:
                time.sleep(0.2)
        time.sleep(1)
        st = {}
        with open(f"/proc/{p.pid}/status") as f:
            for line in f:
                key, _, v = line.partition(":")
                st[key] = v.split()
        return int(st["VmRSS"][0]), int(st["VmHWM"][0]), up, k
    except (OSError, KeyError, ValueError) as e:
        return f"cannot read the launcher's status: {e}"
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for pid in ranks_of(sleeper):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def ranks_of(sleeper):
    """The pids of the live processes running sleeper (the ranks; not the
    launcher, whose command line names it too)."""
    return [pid for pid, cmd in marked(sleeper) if cmd.startswith(sleeper + " ")]


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


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rpartition(")")[2].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def peak_rss(cmd, env, timeout, gnu_time, scratch):
    """(VmHWM of the launcher itself, GNU time's maximum RSS or None), both
    KiB, or an error string.  VmHWM is a high-water mark, so the last sample
    before the launcher exits holds its peak; GNU time (wait4's ru_maxrss)
    also covers the processes the launcher reaped.  It is GNU time and not
    this Python that forks the launcher: a fork of a 14 MiB Python would
    count Python's pages as the child's until its exec."""
    tfile = os.path.join(scratch, "time.out")
    argv = [gnu_time, "-f", "%M", "-o", tfile] + cmd if gnu_time else cmd
    p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    launcher = None if gnu_time else p.pid
    hwm, t0 = 0, time.monotonic()
    while p.poll() is None:
        if launcher is None:        # GNU time's one child
            launcher = next((int(d) for d in os.listdir("/proc")
                             if d.isdigit() and parent_of(d) == p.pid), None)
        try:
            if launcher is not None:
                with open(f"/proc/{launcher}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            hwm = max(hwm, int(line.split()[1]))
        except OSError:
            pass
        if time.monotonic() - t0 > timeout:
            os.killpg(p.pid, signal.SIGKILL)    # its own session: ours only
            p.wait()
            return f"did not finish in {timeout} s: {' '.join(cmd)}"
        time.sleep(0.01)
    if p.returncode != 0:
        return f"exit status {p.returncode}: {' '.join(cmd)}"
    if hwm == 0:
        return "could not read VmHWM"
    maxrss = None
    if gnu_time:
        with open(tfile) as f:
            maxrss = int(f.read().split()[-1])
    return hwm, maxrss


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dlrun", required=True)
    ap.add_argument("--tools", required=True, help="folder of the built helpers")
    ap.add_argument("--shm", required=True, help="scratch folder on tmpfs")
    ap.add_argument("--only", default=",".join(BENCHES),
                    help="comma-separated subset of " + ",".join(BENCHES))
    a = ap.parse_args()
    only = a.only.split(",")
    if not set(only) <= set(BENCHES):
        ap.error(f"--only: choose from {','.join(BENCHES)}")
    b = Bench(a)
    t0 = time.monotonic()
    print(f"dlrun benchmarks ({'quick' if a.quick else 'full'}), "
          f"{time.strftime('%Y-%m-%d %H:%M %Z')}, {os.cpu_count()} CPUs, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"dlrun: {a.dlrun}; output tagging: "
          f"{'--tag-output' if b.tag else 'not available, throughput runs untagged'}")
    for name in BENCHES:
        if name in only:
            getattr(b, name)()
    print()
    print("== summary (goals are reported, never enforced)")
    w = max(len(g[0]) for g in goals) if goals else 0
    for g, fig, met in goals:
        verdict = {True: "met", False: "NOT MET", None: "n/a", "info": ""}[met]
        print(f"{g:<{w}}  {verdict:<7}  {fig}")
    for n in notes:
        print(f"note: {n}")
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
