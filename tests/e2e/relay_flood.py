"""relay_flood.py - a rank that floods its node's relay (DLRUN_BROKER,
unix:PATH, with DLRUN_TOKEN) with N pipelined GETs of keys nobody writes,
each waiting forever; it counts the answers by status, says so and
touches the file MARK.  Then for HOLD seconds it keeps its connection (and
what is parked) and sends 500 more GETs every 10 ms, so that a parked
request's place upstream that comes free is taken again at once.
Usage: relay_flood.py N MARK HOLD"""
import os
import select
import socket
import struct
import sys
import time

OP_AUTH, OP_GET = 1, 3
STATUS = {0: "ok", 1: "notfound", 2: "timeout", 3: "invalid", 4: "limit"}


def frame(op, rid, key=b"", val=b"", timeout=0, arg=0):
    body = struct.pack(">BBHIIq", op, 0, len(key), rid, timeout, arg)
    body += key + val
    return struct.pack(">I", len(body)) + body


def answers(sock, quiet_s):
    """Statuses of every answer until the relay is quiet for quiet_s."""
    buf, seen = b"", {}
    sock.settimeout(quiet_s)
    while True:
        try:
            got = sock.recv(1 << 16)
        except socket.timeout:
            return seen
        if not got:
            seen["closed"] = 1
            return seen
        buf += got
        while len(buf) >= 24:
            n = struct.unpack(">I", buf[:4])[0]
            if len(buf) < 4 + n:
                break
            st = STATUS.get(buf[5], "?")
            seen[st] = seen.get(st, 0) + 1
            buf = buf[4 + n:]


def main():
    n, mark, hold = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    path = os.environ["DLRUN_BROKER"][len("unix:"):]
    tok = bytes.fromhex(os.environ["DLRUN_TOKEN"])
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(frame(OP_AUTH, 1, val=tok, arg=1))
    reqs = b"".join(frame(OP_GET, 2 + i, key=b"flood.%d" % i,
                          timeout=0xFFFFFFFF) for i in range(n))
    s.sendall(reqs)
    seen = answers(s, 3.0)
    print("flood: " + " ".join("%s=%d" % kv for kv in sorted(seen.items())),
          flush=True)
    open(mark, "w").close()
    s.setblocking(False)
    end, i = time.monotonic() + hold, n
    while time.monotonic() < end:
        batch = b"".join(frame(OP_GET, 2 + i + k, key=b"flood.%d" % (i + k),
                               timeout=0xFFFFFFFF) for k in range(500))
        i += 500
        try:
            s.sendall(batch)
        except (BlockingIOError, BrokenPipeError):
            pass
        r, _, _ = select.select([s], [], [], 0.01)
        while r:
            try:
                if not s.recv(1 << 16):
                    break
            except BlockingIOError:
                break
    s.close()


main()
