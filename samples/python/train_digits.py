"""Trains an MLP (64-256-256-10, Adam, batch 32) or a small CNN on the 8x8 digits with loom.

    PYTHONPATH=build/python /usr/bin/python3 samples/python/train_digits.py [--device sim] [--epochs 20]
        [--model mlp|cnn] [--save-traced digits.loom]

--save-traced traces the trained model (loom.jit.trace, dynamic batch) and saves
it as one file that samples/deploy, a C++ program without Python, loads and
runs.

The same script runs on PyTorch by changing `import loom` to `import torch`
(and loom.utils.data to torch.utils.data): that is the point.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from digits import load_digits  # noqa: E402

import loom  # noqa: E402
from loom import nn  # noqa: E402
from loom.utils.data import DataLoader, TensorDataset  # noqa: E402


def accuracy(model, x, y):
    with loom.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


class DigitsCNN(nn.Module):
    """[n, 64] pixels -> [n, 1, 8, 8] -> conv 3x3 (16) -> ReLU -> max pool 2 -> linear 10."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = x.view(-1, 1, 8, 8)
        return self.fc(self.pool(loom.relu(self.conv(x))).flatten(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    parser.add_argument("--save-traced", metavar="PATH", help="trace the trained model and save it (loom.jit.save)")
    parser.add_argument("--min-accuracy", type=float, default=0.97)
    args = parser.parse_args()

    loom.manual_seed(args.seed)
    x_train, y_train, x_test, y_test = load_digits(seed=args.seed)
    dev = args.device
    train = TensorDataset(loom.tensor(x_train).to(dev), loom.tensor(y_train).to(dev))
    loader = DataLoader(train, batch_size=32, shuffle=True)  # order from loom.manual_seed
    xt, yt = loom.tensor(x_test).to(dev), loom.tensor(y_test).to(dev)

    if args.model == "cnn":
        model = DigitsCNN().to(dev)
    else:
        model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)).to(dev)
    optimizer = loom.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    for epoch in range(args.epochs):
        model.train()
        start, total, seen = time.perf_counter(), 0.0, 0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(yb)
            seen += len(yb)
        model.eval()
        rate = seen / (time.perf_counter() - start)
        print(f"epoch {epoch + 1:2d}  loss {total / seen:.4f}  test accuracy {accuracy(model, xt, yt):.4f}  "
              f"{rate:.0f} samples/s")
    final = accuracy(model, xt, yt)
    print(f"final test accuracy {final:.4f}")
    if args.save_traced:
        traced = loom.jit.trace(model, xt[:32], dynamic_batch=True)  # runs on any batch size
        loom.jit.save(traced, args.save_traced)
        print(f"traced model ({len(traced.graph.ops)} nodes) saved to {args.save_traced}")
    return 0 if final >= args.min_accuracy else 1


if __name__ == "__main__":
    sys.exit(main())
