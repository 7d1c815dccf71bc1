"""All-reduce check for dlrun's end-to-end tests.

Run one copy per rank with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (and
LOCAL_RANK) set, as a launcher would.  Every rank contributes rank+1; the sum
must be n(n+1)/2.  Prints one line per rank:

    rank R/N local L host H sum S ok      (or ... BAD)

and exits 0 on success, 1 on a wrong sum or any failure.
"""
import datetime
import os
import socket
import sys


def main():
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local = os.environ.get("LOCAL_RANK", "?")
    host = socket.gethostname()
    import torch
    import torch.distributed as dist

    # A broken launch should fail the test quickly, not hang it for the
    # default 30 minutes.
    dist.init_process_group("gloo", init_method="env://", rank=rank,
                            world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    total = int(t.item())
    want = world * (world + 1) // 2
    verdict = "ok" if total == want else "BAD"
    print(f"rank {rank}/{world} local {local} host {host} sum {total} {verdict}",
          flush=True)
    dist.destroy_process_group()
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # report in one line, as a failing rank
        r = os.environ.get("RANK", "?")
        n = os.environ.get("WORLD_SIZE", "?")
        print(f"rank {r}/{n} host {socket.gethostname()} error {e!r} BAD",
              flush=True)
        sys.exit(1)
