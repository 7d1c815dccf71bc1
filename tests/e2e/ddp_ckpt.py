"""DDP (gloo) training that checkpoints every step and resumes after a restart.

    ddp_ckpt.py FOLDER            one rank of the job (RANK, WORLD_SIZE and
                                  MASTER_ADDR/PORT from the launcher)
    ddp_ckpt.py --reference W     the same training in one process, as W
                                  ranks would do it: prints the weights' sum

FOLDER is shared by every node.  Rank 0 writes FOLDER/ckpt.pt (step, model,
optimizer) after every step, renamed into place so a restart never reads
half a file; every rank starts from it when it is there.  The data of a
step depends only on (rank, step), so an interrupted and resumed job ends
with the weights of one that ran straight through (--reference).
Each rank writes FOLDER/host.RANK.ATTEMPT (its host name) when it starts,
FOLDER/step.RANK (its last step done) after every step, and at the end prints

    rank R/W attempt A from K steps S weights SUM ok     (or BAD)

ok: every rank's weights (all-gathered) are equal.  Environment:
STEPS (default 40) steps of STEP_SLEEP seconds (default 0.2); FAULT, a
comma-separated list of "kill:R:S" (rank R SIGKILLs itself at step S of the
first attempt), "kill:R:S:A" (of attempt A), "bus:R:S" and "bus:R:S:A"
(SIGBUS), "raise:S" (every rank raises an exception at step S, every
attempt).
"""
import datetime
import os
import signal
import socket
import sys
import time


def batch(torch, rank, step):
    gen = torch.Generator().manual_seed(100003 * rank + step)
    x = torch.randn(32, 8, generator=gen)
    return x, x.sum(dim=1, keepdim=True)


def make_model(torch):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(),
                                torch.nn.Linear(16, 1))
    return model, torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)


def weights(torch, model):
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def reference(world, steps):
    """The mean of the ranks' losses has DDP's averaged gradient."""
    import torch
    model, opt = make_model(torch)
    for step in range(1, steps + 1):
        opt.zero_grad()
        loss = sum(torch.nn.functional.mse_loss(model(x), y)
                   for x, y in (batch(torch, r, step) for r in range(world)))
        (loss / world).backward()
        opt.step()
    print(f"{weights(torch, model).sum().item():.6f}")
    return 0


def fault(rank, step, attempt):
    for spec in filter(None, os.environ.get("FAULT", "").split(",")):
        kind, *at = spec.split(":")
        if kind == "raise" and step == int(at[0]):
            raise RuntimeError(f"rank {rank}: a bug at step {step}")
        if kind not in ("kill", "bus"):
            continue
        r, s, a = (int(v) for v in at + ["0"] * (3 - len(at)))  # attempt 0
        if (r, s, a) == (rank, step, attempt):
            os.kill(os.getpid(), signal.SIGKILL if kind == "kill" else signal.SIGBUS)


def put(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def main(folder):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    attempt = int(os.environ.get("DLRUN_RESTART_COUNT", "0"))
    steps = int(os.environ.get("STEPS", "40"))
    pause = float(os.environ.get("STEP_SLEEP", "0.2"))
    ckpt = os.path.join(folder, "ckpt.pt")
    put(os.path.join(folder, f"host.{rank}.{attempt}"), socket.gethostname() + "\n")
    dist.init_process_group("gloo", init_method="env://", rank=rank,
                            world_size=world,
                            timeout=datetime.timedelta(seconds=30))
    model, opt = make_model(torch)
    start = 0
    if os.path.exists(ckpt):
        state = torch.load(ckpt)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        start = state["step"]
    ddp = DDP(model)
    for step in range(start + 1, steps + 1):
        fault(rank, step, attempt)
        opt.zero_grad()
        x, y = batch(torch, rank, step)
        torch.nn.functional.mse_loss(ddp(x), y).backward()
        opt.step()
        if rank == 0:
            torch.save({"step": step, "model": model.state_dict(),
                        "opt": opt.state_dict()}, ckpt + ".tmp")
            os.replace(ckpt + ".tmp", ckpt)
        put(os.path.join(folder, f"step.{rank}"), f"{step}\n")
        time.sleep(pause)
    flat = weights(torch, model)
    gathered = [torch.zeros_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    verdict = "ok" if all(torch.equal(g, flat) for g in gathered) else "BAD"
    print(f"rank {rank}/{world} attempt {attempt} from {start} steps {steps} "
          f"weights {flat.sum().item():.6f} {verdict}", flush=True)
    dist.destroy_process_group()
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--reference"]:
        sys.exit(reference(int(sys.argv[2]), int(os.environ.get("STEPS", "40"))))
    sys.exit(main(sys.argv[1]))
