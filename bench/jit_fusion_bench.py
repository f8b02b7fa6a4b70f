"""Elementwise fusion on the CPU: GELU (tanh form) written as eight elementwise
ops over 16M float32, eager and traced (fused into one region), beside the
STREAM copy bandwidth of the same machine in the same run, and PyTorch's
eager and torch.jit.trace + freeze of the same function.

    PYTHONPATH=build/python /usr/bin/python3 bench/jit_fusion_bench.py [--threads 1] [--reps 10]
        [--numel 16777216] [--device cuda]

On a GPU (--device cuda) the fused region is the CUDA plugin's NVRTC kernel,
and PyTorch's torch.compile joins the peers where it is available.

"copy" is y.copy_(x) over the same number of float32 elements: it moves
the bytes a fused GELU must move (read x, write y), so copy time / fused
time is the fraction of copy bandwidth the region reaches (target 0.8).
Medians of --reps calls after two warm-up calls.
"""
import argparse
import math
import loom
import torch

from median_time import median_seconds


def gelu_ops(mod):
    def f(x):
        return 0.5 * x * (1.0 + mod.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))
    return f


def median_ms(fn, reps):
    return median_seconds(fn, reps) * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--numel", type=int, default=16 * 1024 * 1024)
    p.add_argument("--device", default="cpu")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    loom.set_num_threads(a.threads)
    torch.manual_seed(0)
    gpu = a.device != "cpu"
    tx = torch.randn(a.numel)
    lx = loom.tensor(tx.numpy()).to(a.device)
    ly = loom.empty(a.numel, device=a.device)
    tx = tx.to(a.device)
    ty = torch.empty(a.numel, device=a.device)

    def synced(fn, sync):
        def run():
            fn()
            if gpu:
                sync()
        return run

    def lsync():
        loom.cuda.synchronize()

    def tsync():
        torch.cuda.synchronize()

    f = gelu_ops(loom)
    with loom.no_grad():
        traced = loom.jit.trace(f, (lx,))
        traced.graph.optimize()
        assert traced.graph.ops == ["_fused"], traced.graph.ops
        assert bool((traced(lx) == f(lx)).all().item()), "the fused region must give eager's bits"
        copy = median_ms(synced(lambda: ly.copy_(lx), lsync), a.reps)
        eager = median_ms(synced(lambda: f(lx), lsync), a.reps)
        fused = median_ms(synced(lambda: traced(lx), lsync), a.reps)
    # Training: forward and backward through the same GELU (the fused
    # node's backward is a fused graph too).
    lxg = lx.detach().requires_grad_()
    grad_out = loom.ones(a.numel, device=a.device)

    def train(fn):
        def step():
            lxg.grad = None
            fn(lxg).backward(grad_out)
        return step
    t_eager_train = median_ms(synced(train(f), lsync), max(3, a.reps // 2))
    t_fused_train = median_ms(synced(train(traced), lsync), max(3, a.reps // 2))
    tf = gelu_ops(torch)
    with torch.no_grad():
        # torch.jit.freeze takes modules: wrap the function in one.
        class Gelu(torch.nn.Module):
            def forward(self, x):
                return tf(x)

        tjt = torch.jit.freeze(torch.jit.trace(Gelu().eval(), (tx,)))
        t_copy = median_ms(synced(lambda: ty.copy_(tx), tsync), a.reps)
        t_eager = median_ms(synced(lambda: tf(tx), tsync), a.reps)
        t_jit = median_ms(synced(lambda: tjt(tx), tsync), a.reps)
        t_compile = None
        if gpu and hasattr(torch, "compile"):
            tc = torch.compile(tf)
            t_compile = median_ms(synced(lambda: tc(tx), tsync), a.reps)
    gb = 2 * 4 * a.numel / 1e9
    where = a.device if gpu else f"{a.threads} thread(s)"
    print(f"{where}, {a.numel} float32, medians of {a.reps}; PyTorch {torch.__version__}")
    print(f"{'':<28}{'loom':>10}{'PyTorch':>10}")
    print(f"{'copy (GB/s)':<28}{gb / copy * 1e3:>10.1f}{gb / t_copy * 1e3:>10.1f}")
    print(f"{'copy':<28}{copy:>8.2f}ms{t_copy:>8.2f}ms")
    print(f"{'GELU as 8 ops, eager':<28}{eager:>8.2f}ms{t_eager:>8.2f}ms")
    print(f"{'GELU traced (loom: fused)':<28}{fused:>8.2f}ms{t_jit:>8.2f}ms")
    print(f"{'GELU fwd+bwd, eager':<28}{t_eager_train:>8.2f}ms")
    print(f"{'GELU fwd+bwd, traced':<28}{t_fused_train:>8.2f}ms   ({t_eager_train / t_fused_train:.2f}x)")
    if t_compile is not None:
        print(f"{'GELU torch.compile':<28}{'':>10}{t_compile:>8.2f}ms   (loom fused vs it: {t_compile / fused:.2f}x)")
    print(f"loom traced vs eager: {eager / fused:.2f}x (target 3x); fused at {copy / fused:.2f} of loom's copy "
          f"bandwidth (target 0.8); loom fused vs torch.jit.trace: {t_jit / fused:.2f}x")


if __name__ == "__main__":
    main()
