"""Trains the digits MLP of train_digits.py data-parallel: loom.distributed + DistributedDataParallel.

    PYTHONPATH=build/python /usr/bin/python3 -m loom.distributed.run --nproc-per-node 2 \\
        samples/python/train_digits_ddp.py [--epochs 20] [--batch-size 16]
    PYTHONPATH=build/python /usr/bin/python3 samples/python/train_digits_ddp.py --batch-size 32   # one process

Written the way a PyTorch DDP script is (change `import loom` to `import torch`
and loom.* to torch.*): init_process_group("gloo") from env:// (RANK,
WORLD_SIZE, MASTER_ADDR, MASTER_PORT, set by the launcher), a
DistributedSampler whose set_epoch reshuffles every epoch, the model wrapped
in DistributedDataParallel, rank 0 printing and evaluating. Without a
launcher (no WORLD_SIZE in the environment) it trains in one process without
DDP.

--batch-size is the per-rank batch; the global batch is world size times it.
The run is deterministic, so N processes x batch B train as one process x
batch N*B does: the initial weights come from loom.manual_seed(--seed) (and
DDP broadcasts rank 0's anyway); the sampler deals one permutation (seed +
epoch) out round-robin, so step k of the N ranks together sees the rows of
step k of one process (the 1438 training rows divide evenly by 2: nothing is
padded); CrossEntropyLoss averages each rank's rows and DDP averages the
ranks, which is the global batch's mean when every rank has as many rows —
every step here, the short last one too (15 + 15 against 30). What differs is
float summation order: the global gradient is two half-batch sums added by
the all-reduce instead of one 32-row reduction inside the matmul, so its last
bits differ and 900 Adam steps carry them along. Measured: after 20 epochs
the parameters of 2 x 16 and 1 x 32 differ by at most 1e-6 and every printed
loss and accuracy is equal; frontend_python/tests/test_sample_ddp.py allows
a final accuracy 2 test images (of 359) apart.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from digits import load_digits  # noqa: E402

import loom  # noqa: E402
import loom.distributed as dist  # noqa: E402
from loom import nn  # noqa: E402
from loom.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from loom.utils.data import DataLoader, DistributedSampler, TensorDataset  # noqa: E402


def accuracy(model, x, y):
    with loom.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=16, help="per rank (global: world size times this)")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-accuracy", type=float, default=0.97)
    args = parser.parse_args()

    distributed = "WORLD_SIZE" in os.environ  # set by loom.distributed.run (and torchrun)
    if distributed:
        dist.init_process_group("gloo")  # env://
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1
    # torchrun gives each rank OMP_NUM_THREADS=1; loom's launcher leaves the
    # variable alone, so share this machine's cores between its ranks here.
    if "OMP_NUM_THREADS" not in os.environ:
        loom.set_num_threads(max(1, (os.cpu_count() or 1) // int(os.environ.get("LOCAL_WORLD_SIZE", 1))))

    loom.manual_seed(args.seed)  # the same initial weights on every rank
    x_train, y_train, x_test, y_test = load_digits(seed=args.seed)
    train = TensorDataset(loom.tensor(x_train), loom.tensor(y_train))
    sampler = DistributedSampler(train, num_replicas=world, rank=rank, shuffle=True, seed=args.seed)
    loader = DataLoader(train, batch_size=args.batch_size, sampler=sampler)
    xt, yt = loom.tensor(x_test), loom.tensor(y_test)

    net = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    model = DDP(net) if distributed else net
    optimizer = loom.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    if rank == 0:
        print(f"{world} process(es) x batch {args.batch_size} (global batch {world * args.batch_size}), "
              f"{len(sampler)} training rows per rank")

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)  # a new order each epoch, the same on every rank
        model.train()
        start = time.perf_counter()
        totals = loom.zeros(2, dtype=loom.float64)  # loss sum, rows
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()  # DDP: .grad is now the average over the ranks
            optimizer.step()
            totals += loom.tensor([loss.item() * len(yb), len(yb)], dtype=loom.float64)
        if distributed:
            dist.all_reduce(totals)  # every rank's loss, for the printout
        rate = totals[1].item() / (time.perf_counter() - start)
        if rank == 0:
            net.eval()
            print(f"epoch {epoch + 1:2d}  loss {totals[0].item() / totals[1].item():.4f}  "
                  f"test accuracy {accuracy(net, xt, yt):.4f}  {rate:.0f} samples/s")

    status = 0
    if rank == 0:
        final = accuracy(net, xt, yt)
        print(f"final test accuracy {final:.4f}")
        status = 0 if final >= args.min_accuracy else 1
    if distributed:
        dist.destroy_process_group()
    return status


if __name__ == "__main__":
    sys.exit(main())
