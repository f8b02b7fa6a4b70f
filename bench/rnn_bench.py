"""LSTM / GRU training steps (forward + backward) in loom and PyTorch, side by side in one run.

    PYTHONPATH=build/python python3 bench/rnn_bench.py [cpu|cuda] [threads]

Sizes of real use: pytorch/examples' word-level language model (2 layers, 35 steps, batch 20,
hidden 200 and 650), a 100-step sequence model at batch 64, and a bidirectional 2-layer GRU.
Prints milliseconds per step (best of 5 rounds of 10 steps) and loom / PyTorch.
"""
import sys
import time

import loom
import torch

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
if len(sys.argv) > 2:
    loom.set_num_threads(int(sys.argv[2]))
    torch.set_num_threads(int(sys.argv[2]))

CASES = [("LSTM word-LM small", "LSTM", dict(T=35, N=20, I=200, H=200, L=2)),
         ("LSTM word-LM medium", "LSTM", dict(T=35, N=20, I=650, H=650, L=2)),
         ("LSTM 100 steps x 64", "LSTM", dict(T=100, N=64, I=128, H=256, L=1)),
         ("GRU bidirectional 2 layers", "GRU", dict(T=50, N=32, I=256, H=256, L=2, bidirectional=True))]


def sync(m):
    if device == "cuda":
        (loom.cuda if m is loom else torch.cuda).synchronize()


def step_ms(m, mode, T, N, I, H, L, bidirectional=False):
    net = getattr(m.nn, mode)(I, H, num_layers=L, bidirectional=bidirectional).to(device)
    x = m.randn(T, N, I, device=device)

    def step():
        out, _ = net(x)
        out.sum().backward()
    for _ in range(3):
        step()
    sync(m)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(10):
            step()
        sync(m)
        best = min(best, (time.perf_counter() - t0) / 10 * 1e3)
    return best


print(f"device {device}, torch {torch.__version__}, threads {torch.get_num_threads()}")
for label, mode, cfg in CASES:
    ml, mt = step_ms(loom, mode, **cfg), step_ms(torch, mode, **cfg)
    print(f"{label:30s} loom {ml:8.2f} ms   torch {mt:8.2f} ms   ratio {ml / mt:.2f}")
