"""The digits MLP (64-256-256-10 on 8x8 images, batch 32, Adam): the
launch- and dispatch-bound end of the suite.

The model code is written once against the PyTorch API and built with
whichever library is passed in as `torch` (loom or PyTorch).
"""

NAME = "mlp"

CONFIGS = {
    "cpu": dict(batch=32, lr=1e-3),
    "cuda": dict(batch=32, lr=1e-3),
    "small": dict(batch=32, lr=1e-3),
}
HAS_INFERENCE = False


def build(torch, cfg):
    nn = torch.nn
    return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))


def batch(torch, cfg, device, rng):
    import numpy as np
    x = rng.random((cfg["batch"], 64), dtype=np.float32)
    y = rng.integers(0, 10, cfg["batch"])
    return torch.tensor(x).to(device), torch.tensor(y).to(device)


def loss(torch, model, inputs, targets):
    return torch.nn.functional.cross_entropy(model(inputs), targets)


def optimizer(torch, model, cfg):
    return torch.optim.Adam(model.parameters(), lr=cfg["lr"])
