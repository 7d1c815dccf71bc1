"""One rank of bench/recovery.sh, the same under dlrun and torchrun.

First thing, it writes "start RESTARTS RANK WORLD HOST TIME - 0" to ranks.log
beside this file (TIME: time.time(), the host clock every network namespace
of the test cluster shares; RESTARTS: TORCHELASTIC_RESTART_COUNT, which both
launchers set, though torchrun counts per agent).  Then it acts as a small
gloo job: rank 0 listens on MASTER_PORT, the others connect, and every
0.1 s each sends rank 0 a byte and waits for its answer (an all-reduce's
pattern).  Rank 0's first answer names the attempt (its own start time), and
each rank writes "joined RESTARTS RANK WORLD HOST TIME ATTEMPT STARTED".
Like gloo, a peer that dies breaks the others' connections at once (they
exit 1, so the launcher sees a failed worker), and a peer whose link is cut
leaves them waiting (for gloo's default timeout, 30 minutes, here too).
An attempt whose rank 0 started before the fault (the file "fault" beside
this one) runs until killed, rank 0 writing its step count to "progress"
after each step (a job still running can then be told from a stuck one);
a later attempt's rank 0 ends it after 10 steps.  Standard library only:
importing torch in every rank would cost seconds on a busy 2-core machine,
alike for both launchers.
"""
import os
import socket
import sys
import time

TIMEOUT = 1800      # s, gloo's default


def note(what, restarts, rank, world, when, attempt="-", started=0.0):
    log = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ranks.log")
    line = "%s %d %d %d %s %.6f %s %.6f\n" % (what, restarts, rank, world,
                                             socket.gethostname(), when,
                                             attempt, started)
    # one write of a short line on O_APPEND: lines of ranks never mix
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def connect(addr, port):
    end = time.time() + 60
    while True:
        try:
            return socket.create_connection((addr, port), timeout=5)
        except OSError:
            if time.time() > end:
                raise
            time.sleep(0.05)


def peers(rank, world, addr, port):
    """Rank 0: the other ranks' sockets; the others: the one to rank 0."""
    if rank != 0:
        s = connect(addr, port)
        s.settimeout(TIMEOUT)
        return [s]
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("", port))
    srv.listen(world)
    conns = []
    while len(conns) < world - 1:
        c, _ = srv.accept()
        c.settimeout(TIMEOUT)
        conns.append(c)
    srv.close()
    return conns


def recv_exactly(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise ConnectionError("rank 0 is gone")
        data += chunk
    return data


def step(rank, socks, reply=b"x"):
    """One exchange; rank 0 sends REPLY back.  Returns what rank 0 sent."""
    if rank != 0:
        socks[0].sendall(b"x")
        return recv_exactly(socks[0], len(reply))
    for s in socks:
        if s.recv(1) != b"x":
            raise ConnectionError("a peer is gone")
    for s in socks:
        s.sendall(reply)
    return reply


def main():
    t0 = time.time()
    here = os.path.dirname(os.path.abspath(__file__))
    restarts = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    note("start", restarts, rank, world, t0)
    # started after the fault (bench/recovery.sh touches "fault" first):
    # rank 0 ends the attempt after 10 steps
    finite = os.path.exists(os.path.join(here, "fault"))
    try:
        socks = peers(rank, world, os.environ["MASTER_ADDR"],
                      int(os.environ["MASTER_PORT"]))
        # the first reply names the attempt: rank 0's start time
        attempt = step(rank, socks, b"%016d" % int(t0 * 1e6)).decode()
        note("joined", restarts, rank, world, time.time(), attempt, t0)
        n = 0
        while True:
            time.sleep(0.1)
            n += 1
            end = rank == 0 and finite and n >= 10
            if step(rank, socks, b"e" if end else b"x") == b"e":
                return 0
            if rank == 0 and not finite:
                with open(os.path.join(here, "progress.tmp"), "w") as f:
                    f.write("%d\n" % n)
                os.rename(os.path.join(here, "progress.tmp"),
                          os.path.join(here, "progress"))
    except OSError as e:
        print("rank %d: %s" % (rank, e), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
