"""Trains an MLP (64-256-256-10, Adam, batch 32) on the 8x8 digits with loom.

    PYTHONPATH=build/python /usr/bin/python3 samples/python/train_digits.py [--device sim] [--epochs 20]

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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    loom.manual_seed(args.seed)
    x_train, y_train, x_test, y_test = load_digits(seed=args.seed)
    dev = args.device
    train = TensorDataset(loom.tensor(x_train).to(dev), loom.tensor(y_train).to(dev))
    loader = DataLoader(train, batch_size=32, shuffle=True)  # order from loom.manual_seed
    xt, yt = loom.tensor(x_test).to(dev), loom.tensor(y_test).to(dev)

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
    return 0 if final >= 0.97 else 1


if __name__ == "__main__":
    sys.exit(main())
