"""dlrun_kv - a client of dlrun's rendezvous broker (standard library only).

    import dlrun_kv
    kv = dlrun_kv.Client()                  # DLRUN_BROKER and DLRUN_TOKEN
    kv.put("addr", b"10.0.0.1:29500")
    kv.get("addr", timeout=60)              # -> bytes, waits up to 60 s
    kv.add("arrivals", 1)                   # -> the new count
    kv.barrier("ready", 4, timeout=300)     # -> the generation released
    kv.delete("addr")
    dlrun_kv.progress()                     # --stall-timeout: "still working"

timeout is in seconds: 0 = do not wait, None = no limit.  Errors:
TimeoutError (the deadline of get or barrier passed), KeyError (get without
waiting, or delete, of a key that is not set), Refused (the broker said
invalid or limit reached), ConnectionError (no broker, a wrong token, the
connection lost), ValueError (bad arguments).  A Client is one connection,
for one thread at a time.

As a script it is `dlrun kv` for machines without dlrun:
    python3 dlrun_kv.py put|get|add|barrier|del ARGS... [--timeout S]

The protocol is in dlrun-broker(7).
"""

import os
import socket
import struct
import sys
import time

AUTH, PUT, GET, ADD, BARRIER, DEL = 1, 2, 3, 4, 5, 6
OK, NOTFOUND, TIMEOUT, INVALID, LIMIT = 0, 1, 2, 3, 4
VERSION = 1
MAX_KEY = 256
WAIT_FOREVER = 0xFFFFFFFF
HEADER = struct.Struct(">IBBHIIq")      # len op status klen id timeout arg
GRACE = 30.0            # beyond a request's own timeout: a hung broker


class Refused(Exception):
    """The broker refused a request (invalid, or a limit reached)."""


def _split(broker):
    """'HOST:PORT' or '[V6]:PORT' -> (host, port); 'unix:PATH' -> (PATH, None)."""
    if broker.startswith("unix:") and len(broker) > 5:
        return broker[5:], None
    if broker.startswith("["):
        host, sep, port = broker[1:].partition("]:")
    else:
        host, sep, port = broker.rpartition(":")
        if ":" in host:
            sep = ""            # a bare IPv6 address needs brackets
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError("broker address %r is not HOST:PORT" % broker)
    return host, int(port)


def _bytes(x):
    return x.encode() if isinstance(x, str) else bytes(x)


def _key(key):
    key = _bytes(key)
    if not 1 <= len(key) <= MAX_KEY:
        raise ValueError("key of %d bytes (must be 1 to %d)" % (len(key), MAX_KEY))
    return key


def _wire_timeout(timeout):
    if timeout is None:
        return WAIT_FOREVER
    if timeout < 0:
        raise ValueError("timeout must be >= 0 seconds, or None")
    return min(int(timeout * 1000 + 0.5), WAIT_FOREVER - 1)


def _connect(host, port, timeout):
    """Connect, trying again while refused (the broker may not be up yet)."""
    deadline = time.monotonic() + timeout
    pause = 0.02
    while True:
        try:
            if port is None:        # a Unix socket (one-node jobs)
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(max(deadline - time.monotonic(), 0.001))
                try:
                    sock.connect(host)
                except OSError:
                    sock.close()
                    raise
                return sock
            return socket.create_connection(
                (host, port), timeout=max(deadline - time.monotonic(), 0.001))
        except (ConnectionRefusedError, FileNotFoundError):
            if time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 1.0)


class Client:
    """One authenticated connection to the broker."""

    def __init__(self, broker=None, token=None, timeout=30.0):
        broker = broker or os.environ.get("DLRUN_BROKER")
        token = token or os.environ.get("DLRUN_TOKEN")
        if not broker:
            raise ValueError("DLRUN_BROKER is not set (dlrun sets it in "
                             "multi-node jobs; `dlrun broker` prints one)")
        if not token:
            raise ValueError("DLRUN_TOKEN is not set")
        try:
            secret = bytes.fromhex(token)
        except ValueError:
            secret = b""
        if len(secret) != 16:
            raise ValueError("DLRUN_TOKEN must be 32 hex digits")
        host, port = _split(broker)
        deadline = time.monotonic() + timeout
        pause, tries = 0.02, 0
        while True:
            # the broker turns away a connection when its table is full of
            # ones without the token (a flood): try again, as dlrun.h does
            tries += 1
            self._id, self._notice = 0, None
            self._sock = _connect(host, port, max(deadline - time.monotonic(),
                                                  0.001))
            if port is not None:
                self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                _, self.max_value, _ = self._call(
                    AUTH, b"", secret, VERSION, 0,
                    max(deadline - time.monotonic(), 0.001))
                return
            except ConnectionError:
                self.close()
                if self._notice == INVALID:
                    raise ConnectionError(
                        "the broker closed the connection at AUTH: the token "
                        "(DLRUN_TOKEN) is not this broker's") from None
                if time.monotonic() + pause > deadline:
                    raise ConnectionError(
                        "the broker at %s %s (%d tries over %.1f s)" % (
                            broker, "had no room for a new connection: its "
                            "table is full of connections that do not "
                            "authenticate" if self._notice == LIMIT else
                            "closed the connection before answering AUTH",
                            tries, timeout)) from None
            time.sleep(pause)
            pause = min(pause * 2, 1.0)

    def close(self):
        if self._sock:
            self._sock.close()
            self._sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _recv_exact(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = self._sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            buf += chunk
        return bytes(buf)

    def _call(self, op, key, value=b"", arg=0, timeout_ms=0, wait=GRACE):
        """Send one request and return (status, arg, value) of its answer."""
        if self._sock is None:
            raise ConnectionError("the connection is closed")
        self._id = (self._id + 1) & 0xFFFFFFFF
        frame = HEADER.pack(20 + len(key) + len(value), op, 0, len(key),
                            self._id, timeout_ms, arg) + key + value
        try:
            self._sock.settimeout(wait)
            self._sock.sendall(frame)
            size, aop, status, klen, aid, _, aarg = HEADER.unpack(
                self._recv_exact(HEADER.size))
            if aid == 0 and aop == AUTH:    # the broker says why it closes
                self._notice = status
                raise ConnectionError("the broker closed the connection")
            if size < 20 or klen or aop != op or aid != self._id or status > LIMIT:
                raise ConnectionError("bad answer from the broker")
            body = self._recv_exact(size - 20)
        except (OSError, ConnectionError) as e:
            self.close()        # the stream is no longer in step
            if isinstance(e, socket.timeout):
                raise ConnectionError("no answer from the broker in time") from None
            raise
        return status, aarg, body

    def _wait(self, timeout):
        return None if timeout is None else timeout + GRACE

    def _check(self, status, what, key):
        if status == OK:
            return
        name = key.decode(errors="replace")
        if status == NOTFOUND:
            raise KeyError("%s %r: no such key" % (what, name))
        if status == TIMEOUT:
            raise TimeoutError("%s %r: timed out" % (what, name))
        raise Refused("%s %r: refused by the broker (%s)" % (
            what, name, "invalid" if status == INVALID else "limit reached"))

    def put(self, key, value):
        key, value = _key(key), _bytes(value)
        if len(value) > self.max_value:
            raise ValueError("value of %d bytes (the broker takes at most %d)"
                             % (len(value), self.max_value))
        self._check(self._call(PUT, key, value)[0], "put", key)

    def get(self, key, timeout=0):
        key = _key(key)
        status, _, value = self._call(GET, key, b"", 0, _wire_timeout(timeout),
                                      self._wait(timeout))
        self._check(status, "get", key)
        return value

    def add(self, key, amount=1):
        key = _key(key)
        status, count, _ = self._call(ADD, key, b"", int(amount))
        self._check(status, "add", key)
        return count

    def barrier(self, name, count, timeout=None):
        name = _key(name)
        if not 1 <= count < 2 ** 32:
            raise ValueError("barrier count must be 1 to 2**32-1")
        status, gen, _ = self._call(BARRIER, name, b"", count,
                                    _wire_timeout(timeout), self._wait(timeout))
        self._check(status, "barrier", name)
        return gen

    def delete(self, key):
        key = _key(key)
        self._check(self._call(DEL, key)[0], "del", key)


_progress = {"client": None}
_progress_lock = None


def progress():
    """Tell dlrun this rank is making progress (adds 1 to "dlrun.progress"
    and to "dlrun.progress.RANK", the rank's steps for the step rates):
    under --stall-timeout a rank that reports progress is not stalled even
    when it prints nothing and uses no CPU.  One connection per process,
    made at the first call; safe from any thread; after a lost connection
    the next call connects again."""
    global _progress_lock
    import threading
    if _progress_lock is None:
        _progress_lock = threading.Lock()
    with _progress_lock:
        try:
            if _progress["client"] is None:
                _progress["client"] = Client()
            total = _progress["client"].add("dlrun.progress", 1)
            rank = os.environ.get("DLRUN_RANK", "")
            if rank.isdigit():      # this rank's steps: the step rates
                _progress["client"].add("dlrun.progress." + rank, 1)
            return total
        except ConnectionError:
            _progress["client"] = None
            raise


USAGE = """usage: dlrun_kv.py put KEY VALUE|-
       dlrun_kv.py get KEY [--timeout S]
       dlrun_kv.py add KEY N
       dlrun_kv.py barrier NAME COUNT [--timeout S]
       dlrun_kv.py del KEY
Exit status: 0 done; 1 timed out, not found, refused, unreachable; 2 usage."""


def _parse(argv):
    """-> (action, positional args, timeout or None); SystemExit(2) on usage."""
    args, timeout, given = [], None, False
    it = iter(argv)
    for a in it:
        if a == "--timeout" or a.startswith("--timeout="):
            v = a[10:] if "=" in a else next(it, "")
            try:
                timeout, given = float(v), True
            except ValueError:
                raise SystemExit("dlrun_kv: --timeout %r: want seconds" % v)
        else:
            args.append(a)
    want = {"put": 2, "get": 1, "add": 2, "barrier": 2, "del": 1}
    if not args or args[0] not in want or len(args) - 1 != want[args[0]]:
        print(USAGE, file=sys.stderr)
        raise SystemExit(2)
    if given and args[0] not in ("get", "barrier"):
        raise SystemExit("dlrun_kv: --timeout is for get and barrier")
    if args[0] == "get" and not given:
        timeout = 0
    return args[0], args[1:], timeout


def _run(action, args, timeout):
    with Client() as kv:
        if action == "put":
            value = sys.stdin.buffer.read() if args[1] == "-" else args[1]
            kv.put(args[0], value)
        elif action == "get":
            sys.stdout.buffer.write(kv.get(args[0], timeout))
        elif action == "add":
            print(kv.add(args[0], int(args[1])))
        elif action == "barrier":
            kv.barrier(args[0], int(args[1]), timeout)
        else:
            kv.delete(args[0])


def main(argv):
    try:
        action, args, timeout = _parse(argv)
    except SystemExit as e:
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
            return 2
        return e.code
    try:
        _run(action, args, timeout)
    except ValueError as e:
        print("dlrun_kv: %s" % e, file=sys.stderr)
        return 2
    except (KeyError, TimeoutError, Refused, OSError) as e:
        print("dlrun_kv: %s" % (e.args[0] if e.args else e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
