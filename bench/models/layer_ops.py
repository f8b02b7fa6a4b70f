"""The transformer block's elementwise and reshuffling ops, forward + backward,
loom against PyTorch in one run (issue 22's op table, CPU shapes: batch 2 x
128 tokens, GPT-2-small widths; plus gelu at the GPU table's 4096 rows).

    PYTHONPATH=build/python python3 bench/models/layer_ops.py [--threads 2] [--reps 30]

Each case builds its inputs once per library, runs forward and backward
(grad of ones), and reports the median wall time; speed = PyTorch / loom.
"""
import argparse
import statistics
import time

import numpy as np


def _cases(lib):
    F = lib.nn.functional
    rng = np.random.default_rng(0)

    def leaf(*shape):
        return lib.tensor(rng.standard_normal(shape).astype(np.float32)).requires_grad_()

    def gelu(rows, approximate):
        x = leaf(rows, 3072)
        return lambda: F.gelu(x, approximate=approximate).backward(lib.ones(rows, 3072)), [x]

    def layer_norm():
        x, w, b = leaf(256, 768), leaf(768), leaf(768)
        return lambda: F.layer_norm(x, (768,), w, b).backward(lib.ones(256, 768)), [x, w, b]

    def attention_softmax():
        # The explicit attention's softmax over [batch, heads, T, T] scores.
        x, g = leaf(8, 12, 128, 128), lib.tensor(rng.standard_normal((8, 12, 128, 128)).astype(np.float32))
        return lambda: F.softmax(x, -1).backward(g), [x]

    def qkv_reshuffle():
        qkv = leaf(2, 128, 2304)

        def run():
            q, k, v = qkv.split(768, dim=2)
            parts = [t.view(2, 128, 12, 64).transpose(1, 2).contiguous() for t in (q, k, v)]
            (parts[0] + parts[1] + parts[2]).backward(lib.ones(2, 12, 128, 64))
        return run, [qkv]

    def causal_attention(b, t, explicit):
        # GPT's attention core, [b, 12 heads, t, 64]: scaled_dot_product_attention
        # where the library has it (loom; PyTorch >= 2.0), else what
        # nanoGPT writes without it (the peer's path on PyTorch 1.13).
        q, k, v = leaf(b, 12, t, 64), leaf(b, 12, t, 64), leaf(b, 12, t, 64)
        g = lib.tensor(rng.standard_normal((b, 12, t, 64)).astype(np.float32))
        keep = lib.tril(lib.ones(t, t)) == 1

        def run():
            if explicit or not hasattr(F, "scaled_dot_product_attention"):
                att = (q @ k.transpose(-2, -1)) * (1.0 / 8.0)
                y = F.softmax(att.masked_fill(~keep, float("-inf")), dim=-1) @ v
            else:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            y.backward(g)
        return run, [q, k, v]

    return [("gelu (erf) fwd+bwd [256, 3072]", gelu(256, "none")),
            ("gelu (tanh) fwd+bwd [256, 3072]", gelu(256, "tanh")),
            ("gelu (erf) fwd+bwd [4096, 3072]", gelu(4096, "none")),
            ("gelu (tanh) fwd+bwd [4096, 3072]", gelu(4096, "tanh")),
            ("layer_norm fwd+bwd [256, 768], weight, bias", layer_norm()),
            ("softmax fwd+bwd [8, 12, 128, 128], last dim", attention_softmax()),
            ("qkv split/view/transpose/contiguous fwd+bwd [2, 128, 2304]", qkv_reshuffle()),
            ("causal attention fwd+bwd [2, 12, 128, 64]", causal_attention(2, 128, False)),
            ("  written out (matmul, mask, softmax) [2, 12, 128, 64]", causal_attention(2, 128, True)),
            ("causal attention fwd+bwd [1, 12, 1024, 64]", causal_attention(1, 1024, False)),
            ("  written out (matmul, mask, softmax) [1, 12, 1024, 64]", causal_attention(1, 1024, True))]


def _time(fn, leaves, reps):
    def step():
        fn()
        for t in leaves:
            t.grad = None
    step()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=30)
    args = p.parse_args()
    import loom
    import torch
    results = {}
    for lib in (loom, torch):
        lib.set_num_threads(args.threads)
        for name, (fn, leaves) in _cases(lib):
            results.setdefault(name, []).append(_time(fn, leaves, args.reps))
    print(f"{args.threads} thread(s), medians of {args.reps}; PyTorch {torch.__version__}")
    print(f"{'case':<62}{'loom':>11}{'torch':>11}{'speed':>8}")
    for name, (lo, to) in results.items():
        print(f"{name:<62}{lo:>9.3f}ms{to:>9.3f}ms{to / lo:>7.2f}x")


if __name__ == "__main__":
    main()
