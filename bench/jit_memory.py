"""Peak intermediate memory of a ResNet-style basic block, eager vs traced, from the
device allocator's statistics (the CPU's count tensors of 8 KiB and more).

    PYTHONPATH=build/python /usr/bin/python3 bench/jit_memory.py [--batch 64] [--device cpu]

On `sim` the convolutions and batch norms run through the CPU fallback, whose device-side
copies (a fallen-back in-place op allocates a temporary of its output) count there.

The block: conv3x3-BN-ReLU-conv3x3-BN + identity, ReLU, 64 channels at 32x32, eval mode,
no grad. Reported: the peak bytes allocated during one forward minus what was allocated
before it (the input and parameters): eager, traced (loom.jit, optimised) and traced then
frozen (loom.jit.freeze: the batch norms folded into the convs, as torch.jit.freeze does).
"""
import argparse

import loom
import loom.nn as nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        h = loom.relu(self.bn1(self.conv1(x)))
        return loom.relu(self.bn2(self.conv2(h)) + x)


def peak_of(fn, dev):
    base = loom.memory_allocated(dev)
    loom.reset_peak_memory_stats(dev)
    out = fn()
    peak = loom.max_memory_allocated(dev) - base
    del out
    return peak


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--device", default="cpu")
    a = p.parse_args()
    dev = a.device
    loom.manual_seed(0)
    m = Block(64).eval().to(dev)
    x = loom.randn(a.batch, 64, 32, 32).to(dev)
    with loom.no_grad():
        traced = loom.jit.trace(m, x)
        frozen = loom.jit.freeze(traced)
        traced.graph.optimize()
        eager = peak_of(lambda: m(x), dev)
        graph = peak_of(lambda: traced(x), dev)
        frozen_peak = peak_of(lambda: frozen(x), dev)
        assert loom.allclose(frozen(x), m(x), rtol=1e-4, atol=1e-4), "the frozen block must match the model"
    mib = 1 << 20
    print(f"{dev}, block at batch {a.batch}: one activation {x.numel() * 4 / mib:.1f} MiB; peak beyond inputs: "
          f"eager {eager / mib:.1f} MiB, traced {graph / mib:.1f} MiB ({graph / eager:.2f}x), "
          f"traced and frozen {frozen_peak / mib:.1f} MiB ({frozen_peak / eager:.2f}x)")


if __name__ == "__main__":
    main()
