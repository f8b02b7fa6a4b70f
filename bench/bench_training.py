"""The digits MLP training step (64-256-256-10, batch 32, Adam), for python_bench.py.

One step: zero_grad, forward, cross-entropy, backward, Adam step — the same
code on loom and on PyTorch (the libraries share their API).
"""


def _step_fn(lib):
    import numpy as np
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.random((32, 64), dtype=np.float32))
    y = lib.tensor(rng.integers(0, 10, 32))
    nn = lib.nn
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    return step


def training_step_case(loom):
    try:
        import torch
        torch_fn = _step_fn(torch)
    except ImportError:
        torch_fn = None
    return ("MLP training step (64-256-256-10, b32, Adam)", _step_fn(loom), torch_fn, 200)
