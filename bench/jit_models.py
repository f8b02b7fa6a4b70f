"""Whole models traced: inference through loom.jit (traced, optimised, fused;
and traced then frozen, loom.jit.freeze: batch norms folded into the convs)
against loom eager, with PyTorch's eager and torch.jit.trace + freeze (and
torch.compile on a GPU) of the same model code beside them.

    PYTHONPATH=build/python /usr/bin/python3 bench/jit_models.py [--models gpt,resnet,mlp]
        [--config cpu] [--threads 1] [--device cpu] [--reps 5] [--gelu-ops]

The models are bench/models/*.py (written once against the PyTorch API), in
eval mode, without grad; loom's traced output is checked against its eager
output first. `--config gpt2` (GPU) is GPT-2 small at batch 8 x 512.
Medians of --reps calls after a warm-up.
"""
import argparse
import os
import sys

import numpy as np

import loom
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "models"))
import gpt  # noqa: E402
import mlp  # noqa: E402
import resnet  # noqa: E402
from median_time import median_seconds  # noqa: E402

MODELS = {"gpt": gpt, "resnet": resnet, "mlp": mlp}
gpt.CONFIGS.setdefault("gpt2", dict(n_layer=12, n_head=12, n_embd=768, vocab=50257, block=512, batch=8, lr=3e-4))


def timed(fn, sync, reps):
    def run():
        fn()
        sync()
    return median_seconds(run, reps, warmup=1) * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="gpt,resnet,mlp")
    p.add_argument("--config", default=None, help="each model file's size preset (default: cpu or cuda)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--gelu-ops", action="store_true", help="GPT's GELU written as eight ops, as nanoGPT's first model.py")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    loom.set_num_threads(a.threads)
    gpu = a.device != "cpu"
    lsync = (lambda: loom.cuda.synchronize()) if gpu else (lambda: None)
    tsync = (lambda: torch.cuda.synchronize()) if gpu else (lambda: None)
    print(f"{a.device}{'' if gpu else f', {a.threads} thread(s)'}; medians of {a.reps}; PyTorch {torch.__version__}")
    print(f"{'model':<22}{'loom eager':>12}{'loom traced':>13}{'loom frozen':>13}{'torch eager':>13}"
          f"{'torch jit':>11}{'torch.compile':>15}{'traced/eager':>14}{'frozen vs torch jit':>21}")
    for name in a.models.split(","):
        mod = MODELS[name]
        config = a.config or ("cuda" if gpu else "cpu")
        cfg = dict(mod.CONFIGS[config], gelu="ops" if a.gelu_ops else "module")
        rng = np.random.default_rng(0)
        loom.manual_seed(0)
        lm = mod.build(loom, cfg).to(a.device).eval()
        lx, _ = mod.batch(loom, cfg, a.device, rng)
        rng = np.random.default_rng(0)
        torch.manual_seed(0)
        tm = mod.build(torch, cfg).to(a.device).eval()
        tx, _ = mod.batch(torch, cfg, a.device, rng)
        with loom.no_grad():
            traced = loom.jit.trace(lm, (lx,))
            n_nodes = len(traced.graph.ops)
            frozen = loom.jit.freeze(traced)
            traced.graph.optimize()
            fused = traced.graph.ops.count("_fused")
            want, got = lm(lx), traced(lx)
            assert bool(loom.allclose(got, want, rtol=1e-4, atol=1e-4)), f"{name}: traced output differs"
            assert bool(loom.allclose(frozen(lx), want, rtol=1e-3, atol=1e-3)), f"{name}: frozen output differs"
            le = timed(lambda: lm(lx), lsync, a.reps)
            lt = timed(lambda: traced(lx), lsync, a.reps)
            lf = timed(lambda: frozen(lx), lsync, a.reps)
        with torch.no_grad():
            te = timed(lambda: tm(tx), tsync, a.reps)
            tj = torch.jit.freeze(torch.jit.trace(tm, (tx,)))
            tjt = timed(lambda: tj(tx), tsync, a.reps)
            tc = None
            if gpu and hasattr(torch, "compile"):
                compiled = torch.compile(tm)
                tc = timed(lambda: compiled(tx), tsync, a.reps)
        label = (f"{name} ({config}): {n_nodes}->{len(traced.graph.ops)} nodes, {fused} fused; "
                 f"frozen {len(frozen.graph.ops)} nodes")
        print(label)
        print(f"{'':<22}{le:>10.2f}ms{lt:>11.2f}ms{lf:>11.2f}ms{te:>11.2f}ms{tjt:>9.2f}ms"
              f"{(f'{tc:.2f}ms' if tc else '-'):>15}{le / lt:>13.2f}x{tjt / lf:>20.2f}x")


if __name__ == "__main__":
    main()
