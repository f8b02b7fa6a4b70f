"""Traced vs eager: the executor's overhead on a small model, loom and PyTorch side by side.

    PYTHONPATH=build/python /usr/bin/python3 bench/jit_bench.py [--threads 1] [--reps 2000]

A 3-layer MLP (64-256-256-10, ReLU) at batch 1 (launch-bound: the per-node
cost is what shows) and at batch 256, forward only, no grad: loom eager, loom
traced (loom.jit.trace), PyTorch eager and torch.jit.trace + torch.jit.freeze.
Medians of `--reps` calls, after warm-up.
"""
import argparse
import loom
import torch

from median_time import median_seconds


def mlp(nn):
    return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))


def median_us(fn, reps):
    return median_seconds(fn, reps, warmup=max(20, reps // 20)) * 1e6


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--reps", type=int, default=2000)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    loom.set_num_threads(a.threads)
    torch.manual_seed(0)
    tm = mlp(torch.nn).eval()
    lm = mlp(loom.nn).eval()
    lm.load_state_dict({k: loom.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    print(f"{a.threads} thread(s), medians of {a.reps}; PyTorch {torch.__version__}")
    print(f"{'case':<34}{'loom eager':>12}{'loom traced':>13}{'torch eager':>13}{'torch jit':>11}"
          f"{'traced/eager':>14}{'vs torch jit':>14}")
    for batch in (1, 256):
        tx = torch.randn(batch, 64)
        lx = loom.tensor(tx.numpy())
        with torch.no_grad():
            tj = torch.jit.freeze(torch.jit.trace(tm, tx))
        with loom.no_grad():
            traced = loom.jit.trace(lm, lx)
            assert (traced(lx) - lm(lx)).abs().max().item() < 1e-5
            le = median_us(lambda: lm(lx), a.reps)
            lt = median_us(lambda: traced(lx), a.reps)
        with torch.no_grad():
            te = median_us(lambda: tm(tx), a.reps)
            tjt = median_us(lambda: tj(tx), a.reps)
        print(f"{'MLP 64-256-256-10, batch ' + str(batch):<34}{le:>10.1f}us{lt:>11.1f}us{te:>11.1f}us{tjt:>9.1f}us"
              f"{le / lt:>13.2f}x{tjt / lt:>13.2f}x")


if __name__ == "__main__":
    main()
