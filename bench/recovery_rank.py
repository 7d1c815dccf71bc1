"""One rank of bench/recovery.sh, the same under dlrun and torchrun.

It writes "start ATTEMPT RANK WORLD HOST TIME" to ranks.log beside this file
as its very first act (TIME: time.time(), the host clock every network
namespace of the test cluster shares; ATTEMPT: TORCHELASTIC_RESTART_COUNT,
which both launchers set), then joins a tiny stand-in for a gloo job: rank 0
listens on MASTER_PORT, the others connect, and every 0.1 s each sends rank
0 one byte and waits for one back (an all-reduce's pattern).  After the
first exchange it writes "joined ..." the same way.  Like gloo, a peer that
dies breaks the others' connections at once (they exit 1, so the launcher
sees a failed worker), and a peer whose link is cut leaves them waiting
(gloo's default timeout, 30 minutes, here too).  Rank 0 of the first
attempt writes its step count to progress beside this file after every
step, so that a launcher that never restarts can be told apart from a job
that is stuck.  The first attempt runs until it is killed; a later one does
10 steps and exits 0.  Standard library only: importing torch on every start would cost
seconds on a busy 2-core machine and be the same for both launchers.
"""
import os
import socket
import sys
import time

TIMEOUT = 1800      # s, gloo's default



def note(what, attempt, rank, world, when):
    log = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ranks.log")
    line = "%s %d %d %d %s %.6f\n" % (what, attempt, rank, world,
                                      socket.gethostname(), when)
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


def step(rank, socks):
    if rank != 0:
        socks[0].sendall(b"x")
        if socks[0].recv(1) != b"x":
            raise ConnectionError("rank 0 is gone")
        return
    for s in socks:
        if s.recv(1) != b"x":
            raise ConnectionError("a peer is gone")
    for s in socks:
        s.sendall(b"x")


def main():
    t0 = time.time()
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    note("start", attempt, rank, world, t0)
    try:
        socks = peers(rank, world, os.environ["MASTER_ADDR"],
                      int(os.environ["MASTER_PORT"]))
        step(rank, socks)
        note("joined", attempt, rank, world, time.time())
        n = 0
        here = os.path.dirname(os.path.abspath(__file__))
        while attempt == 0 or n < 10:
            time.sleep(0.1)
            step(rank, socks)
            n += 1
            if attempt == 0 and rank == 0:
                with open(os.path.join(here, "progress.tmp"), "w") as f:
                    f.write("%d\n" % n)
                os.rename(os.path.join(here, "progress.tmp"),
                          os.path.join(here, "progress"))
    except OSError as e:
        print("rank %d: %s" % (rank, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
