"""The finetune program's losses against PyTorch 1.13 training the same models on the same data.

    python3 compare_with_pytorch.py <path to libtorch_finetune>

Builds finetune.cpp's two models in PyTorch (Debian's python3-torch) with a fixed seed, writes their
state dicts and the data with torch.save, runs the ported C++ program on them, trains the same way
here, and compares every logged loss (relative 1e-4: float32 over a few dozen steps).
"""
import math
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.fc = nn.Linear(16 * 7 * 7, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.conv2(x))
        return F.log_softmax(self.fc(x.flatten(1)), 1)


class SequenceModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(1, 16, num_layers=2, batch_first=True)
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        return self.head(self.lstm(x)[0])


def pytorch_losses(cnn, seq, images, labels, sequences, targets):
    out = {}
    adam = torch.optim.Adam(cnn.parameters(), lr=1e-3, weight_decay=1e-4)
    cnn.train()
    for step in range(images.shape[0] // 32):
        adam.zero_grad()
        loss = F.nll_loss(cnn(images[step * 32:(step + 1) * 32]), labels[step * 32:(step + 1) * 32])
        loss.backward()
        adam.step()
        out["cnn %d" % step] = loss.item()
    cnn.eval()
    with torch.no_grad():
        out["cnn eval"] = F.nll_loss(cnn(images), labels).item()
    sgd = torch.optim.SGD(seq.parameters(), lr=0.1, momentum=0.9)
    for step in range(15):
        sgd.zero_grad()
        loss = F.mse_loss(seq(sequences), targets)
        loss.backward()
        nn.utils.clip_grad_norm_(seq.parameters(), 0.5)
        sgd.step()
        out["lstm %d" % step] = loss.item()
    return out


def main():
    exe = os.path.abspath(sys.argv[1])
    torch.manual_seed(0)
    cnn, seq = CNN(), SequenceModel()
    images = torch.randn(192, 1, 28, 28)
    labels = (images[:, 0, 10:18, 10:18].mean((1, 2)) * 20).long().clamp(-4, 5) + 4
    t = torch.linspace(0, 4 * math.pi, 21)
    phase = torch.rand(24, 1) * 2 * math.pi
    waves = torch.sin(t.unsqueeze(0) + phase).unsqueeze(-1)
    sequences, targets = waves[:, :-1].contiguous(), waves[:, 1:].contiguous()
    with tempfile.TemporaryDirectory() as d:
        torch.save(cnn.state_dict(), os.path.join(d, "cnn.pt"))
        torch.save(seq.state_dict(), os.path.join(d, "sequence.pt"))
        torch.save([images, labels, sequences, targets], os.path.join(d, "data.pt"))
        r = subprocess.run([exe], cwd=d, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        print("FAIL: the C++ program failed")
        return 1
    loom = {}
    for line in r.stdout.splitlines():
        key, _, value = line.rpartition(" ")
        loom[key] = float(value)
    want = pytorch_losses(cnn, seq, images, labels, sequences, targets)
    errors, worst = [], 0.0
    if sorted(loom) != sorted(want):
        errors.append("logged steps differ: {} vs {}".format(sorted(loom), sorted(want)))
    for key, value in want.items():
        if key in loom:
            rel = abs(loom[key] - value) / max(abs(value), 1e-12)
            worst = max(worst, rel)
            if rel > 1e-4:
                errors.append("{}: loom {} PyTorch {}".format(key, loom[key], value))
    for e in errors:
        print("FAIL:", e)
    print("ok: {} losses, largest relative difference {:.2g}".format(len(want), worst) if not errors else
          "{} failures".format(len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
