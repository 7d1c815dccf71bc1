#!/usr/bin/env python3
"""hvd_gloo_client.py - one Horovod rank's Gloo start-up, without Horovod.

Speaks to the rendezvous server as Horovod's C++ HTTPStore does
(horovod/common/gloo/http_store.cc with the HTTPRequest client): one TCP
connection per request, "METHOD /SCOPE/KEY HTTP/1.1", Host and
Content-Length headers, the answer read until the server closes; a status
other than 200/404 or a socket error is retried 3 times 500 ms apart; a
key not there yet is polled every 10 ms (gloo's Store::wait), up to
HOROVOD_GLOO_TIMEOUT_SECONDS (30).

Then does what GlooContext::Initialize does with it: three rendezvous in
Horovod's order and scopes - "global_" (HOROVOD_RANK/SIZE),
"local_<CROSS_RANK>" (LOCAL_RANK/SIZE), "cross_<LOCAL_RANK>"
(CROSS_RANK/SIZE) - each like gloo's connectFullMesh: listen on the
HOROVOD_GLOO_IFACE address, PUT the address under the rank's key, wait for
and GET every peer's, connect to all of them, then DELETE /SCOPE/RANK
(HTTPStore::Finalize).  Over each mesh it sums rank+1 (an allreduce), and
every rank checks the sums.  Standard library only.

Exit 0 with "rank R ok ..." on stdout; 1 with the reason on stderr.
"""
import os
import socket
import struct
import sys
import time

ENV = os.environ


def die(msg):
    sys.stderr.write("rank %s: %s\n" % (ENV.get("HOROVOD_RANK", "?"), msg))
    sys.exit(1)


class HTTPStore:
    """Horovod's HTTPStore: url prefix http://ADDR:PORT/SCOPE/."""

    def __init__(self, addr, port, scope, rank):
        self.addr, self.port, self.scope, self.rank = addr, port, scope, rank

    def _once(self, method, key, body):
        req = ("%s /%s/%s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n"
               % (method, self.scope, key, self.addr, len(body))).encode()
        with socket.create_connection((self.addr, self.port), timeout=30) as s:
            s.sendall(req + body)
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = None
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        if length is not None and len(rest) != length:
            raise IOError("answer body %d bytes, Content-Length %d"
                          % (len(rest), length))
        return status, rest

    def _perform(self, method, key, body=b""):
        for _ in range(3):              # MAX_RETRY_TIMES
            try:
                status, value = self._once(method, key, body)
                if status in (200, 404):
                    return status, value
                sys.stderr.write("HTTP response not OK, got %d\n" % status)
            except (OSError, ValueError, IndexError) as e:
                sys.stderr.write("HTTP exception: %s\n" % e)
            time.sleep(0.5)             # RETRY_WAITING_TIME_MILLSEC
        die("HTTP %s /%s/%s failed too many times" % (method, self.scope, key))

    def set(self, key, data):
        self._perform("PUT", key, data)

    def get(self, key):
        status, value = self._perform("GET", key)
        return value if status == 200 else None

    def wait_get(self, key, timeout):
        start = time.monotonic()
        while True:
            value = self.get(key)
            if value is not None:
                return value
            if time.monotonic() - start > timeout:
                die("wait timeout after %d seconds for key(s): %s/%s"
                    % (timeout, self.scope, key))
            time.sleep(0.01)

    def finalize(self):
        self._perform("DELETE", str(self.rank))


def iface_addr(iface):
    """The IPv4 address of iface (SIOCGIFADDR), as gloo's tcp device binds."""
    import fcntl
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        packed = fcntl.ioctl(s.fileno(), 0x8915,
                             struct.pack("256s", iface[:15].encode()))
        return socket.inet_ntoa(packed[20:24])
    finally:
        s.close()


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise IOError("peer closed")
        data += chunk
    return data


def full_mesh(store, rank, size, ip, timeout):
    """connectFullMesh: publish, wait for every peer, connect both ways.
    Returns {peer: socket to send on}, {peer: socket to receive on}."""
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.bind((ip, 0))
    lsock.listen(size)
    # the value is large as gloo's is (every rank's address for every pair)
    me = ("%s:%d" % lsock.getsockname()).encode()
    store.set(str(rank), me + b"|" + b"x" * (256 * size))
    out, inn = {}, {}
    for peer in range(size):
        if peer == rank:
            continue
        host, port = store.wait_get(str(peer), timeout).split(b"|")[0].split(b":")
        c = socket.create_connection((host.decode(), int(port)), timeout=timeout)
        c.sendall(struct.pack("!i", rank))
        out[peer] = c
    lsock.settimeout(timeout)
    while len(inn) < size - 1:
        c, _ = lsock.accept()
        c.settimeout(timeout)
        inn[struct.unpack("!i", recv_exact(c, 4))[0]] = c
    lsock.close()
    store.finalize()
    return out, inn


def allreduce_sum(mesh, rank, value):
    out, inn = mesh
    for c in out.values():
        c.sendall(struct.pack("!q", value))
    return value + sum(struct.unpack("!q", recv_exact(c, 8))[0]
                       for c in inn.values())


def main():
    need = ["HOROVOD_GLOO_RENDEZVOUS_ADDR", "HOROVOD_GLOO_RENDEZVOUS_PORT",
            "HOROVOD_GLOO_IFACE", "HOROVOD_RANK", "HOROVOD_SIZE",
            "HOROVOD_LOCAL_RANK", "HOROVOD_LOCAL_SIZE", "HOROVOD_CROSS_RANK",
            "HOROVOD_CROSS_SIZE", "HOROVOD_HOSTNAME"]
    missing = [n for n in need if n not in ENV]
    if missing:
        die("not set: " + " ".join(missing))
    if ENV.get("HOROVOD_CONTROLLER") != "gloo" or \
            ENV.get("HOROVOD_CPU_OPERATIONS") != "gloo":
        die("HOROVOD_CONTROLLER/HOROVOD_CPU_OPERATIONS are not gloo")
    g = {k: int(ENV["HOROVOD_" + k.upper()]) for k in
         ("rank", "size", "local_rank", "local_size", "cross_rank", "cross_size")}
    addr = ENV["HOROVOD_GLOO_RENDEZVOUS_ADDR"]
    port = int(ENV["HOROVOD_GLOO_RENDEZVOUS_PORT"])
    timeout = int(ENV.get("HOROVOD_GLOO_TIMEOUT_SECONDS", "30"))
    ip = iface_addr(ENV["HOROVOD_GLOO_IFACE"])
    restart = ENV.get("DLRUN_RESTART_COUNT", "0")
    stale = HTTPStore(addr, port, "global_", g["rank"])
    if ENV.get("HVD_TEST_FAIL_FIRST") and restart != "0" and g["rank"] == 0 \
            and stale.get("stale") is not None:
        die("attempt %s sees the first attempt's key" % restart)
    contexts = [("global_", g["rank"], g["size"]),
                ("local_%d" % g["cross_rank"], g["local_rank"], g["local_size"]),
                ("cross_%d" % g["local_rank"], g["cross_rank"], g["cross_size"])]
    meshes = [full_mesh(HTTPStore(addr, port, scope, r), r, n, ip, timeout)
              for scope, r, n in contexts]
    sums = [allreduce_sum(m, g["rank"], g["rank"] + 1) for m in meshes]
    if sums[0] != g["size"] * (g["size"] + 1) // 2:
        die("global allreduce gave %d" % sums[0])
    # HVD_TEST_FAIL_FIRST: the first attempt leaves a key and rank 1 fails,
    # so that --max-restarts runs a second attempt on an emptied store
    if ENV.get("HVD_TEST_FAIL_FIRST") and restart == "0":
        stale.set("stale", b"first attempt")
        allreduce_sum(meshes[0], g["rank"], 0)
        if g["rank"] == 1:
            die("failing on purpose in attempt 0")
        time.sleep(60)
    # every rank finalized every scope before this barrier: all emptied
    allreduce_sum(meshes[0], g["rank"], 0)
    if g["rank"] == 0:
        left = [s for s, _, n in contexts
                for r in range(n)
                if HTTPStore(addr, port, s, 0).get(str(r)) is not None]
        if left:
            die("keys left after every rank finalized: %s" % left)
        print("rank 0: every scope emptied after finalize")
    print("rank %d ok global %d local %d cross %d on %s"
          % (g["rank"], sums[0], sums[1], sums[2], ENV["HOROVOD_HOSTNAME"]))
    sys.stdout.flush()
    for out, inn in meshes:
        for c in list(out.values()) + list(inn.values()):
            c.close()


if __name__ == "__main__":
    main()
