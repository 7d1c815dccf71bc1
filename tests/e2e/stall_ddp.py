"""A PyTorch DDP (gloo) job for dlrun's stall test (tests/e2e/t_stall.sh).

Every rank runs steps of a small model, each ending in DDP's all-reduce of
the gradients, and prints a line per step.  With STALL_RANK=R, rank R stops
at step STALL_STEP (default 3) inside the loop: it waits forever on a pipe
nobody writes (STALL_HOW=pipe, the default) or sleeps (STALL_HOW=sleep).
The others then wait in the all-reduce.  Gloo's own timeout is set far
beyond the test's, so that dlrun, not gloo, sees the stall.
"""
import datetime
import os
import sys
import time


def stuck_forever(how):
    if how == "sleep":
        while True:
            time.sleep(3600)
    r, _w = os.pipe()
    os.read(r, 1)       # nobody writes: blocks in pipe_read


def main():
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    stall_rank = int(os.environ.get("STALL_RANK", "-1"))
    stall_step = int(os.environ.get("STALL_STEP", "3"))
    how = os.environ.get("STALL_HOW", "pipe")
    steps = int(os.environ.get("STEPS", "1000000"))
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("gloo", init_method="env://", rank=rank,
                            world_size=world,
                            timeout=datetime.timedelta(seconds=3600))
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(steps):
        if rank == stall_rank and step == stall_step:
            print(f"rank {rank} stops at step {step}", flush=True)
            stuck_forever(how)
        opt.zero_grad()
        loss = model(torch.randn(4, 8)).pow(2).mean()
        loss.backward()             # DDP all-reduces the gradients here
        opt.step()
        print(f"rank {rank} step {step} loss {loss.item():.4f}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
