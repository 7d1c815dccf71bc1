# meet.py - a rendezvous at MASTER_ADDR:MASTER_PORT, as a TCPStore would:
# rank 0 listens, every other rank connects and sends its rank; rank 0 says
# so, with the port (tests/e2e/t_pertask_*.sh, t_flux_pmi.sh).
import os, socket, time
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
addr = (os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]))
if rank == 0:
    s = socket.socket(); s.bind(addr); s.listen(world)
    got = sorted(int(s.accept()[0].recv(16)) for _ in range(world - 1))
    print("met", got, "on", addr[1])
else:
    for _ in range(600):
        try:
            c = socket.create_connection(addr); break
        except OSError:
            time.sleep(0.05)
    c.sendall(str(rank).encode())
