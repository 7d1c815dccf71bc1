"""Train a tiny model with DistributedDataParallel (gloo) under a launcher.

Each rank sees different data; DDP averages the gradients, so every rank
must end with the same weights.  Each rank prints

    rank R/N weights CHECKSUM ok      (or ... BAD)

where ok means every rank's checksum (all-gathered) is equal and the loss
went down.  Exit 0 on success, 1 otherwise.
"""
import datetime
import os
import sys


def main():
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", init_method="env://", rank=rank,
                            world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(0)                 # same initial weights everywhere
    model = DDP(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(),
                                    torch.nn.Linear(16, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(1000 + rank)   # different data per rank
    x = torch.randn(64, 8, generator=gen)
    y = x.sum(dim=1, keepdim=True)
    first = last = None
    for _ in range(30):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
        last = loss.item()
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    gathered = [torch.zeros_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    same = all(torch.equal(g, gathered[0]) for g in gathered)
    verdict = "ok" if same and last < first else "BAD"
    print(f"rank {rank}/{world} weights {flat.sum().item():.6f} {verdict}",
          flush=True)
    dist.destroy_process_group()
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
