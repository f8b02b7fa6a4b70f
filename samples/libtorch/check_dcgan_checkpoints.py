"""PyTorch loads what the ported dcgan program saved with loom::save.

    python3 check_dcgan_checkpoints.py <dir the program ran in>

The generator and discriminator checkpoints load strictly into the same
architectures built in PyTorch (Debian's python3-torch), and a saved sample
is a [10, 1, 28, 28] tensor in [0, 1].
"""
import os
import sys

import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, noise=100):
        super().__init__()
        self.conv1 = nn.ConvTranspose2d(noise, 256, 4, bias=False)
        self.conv2 = nn.ConvTranspose2d(256, 128, 3, stride=2, padding=1, bias=False)
        self.conv3 = nn.ConvTranspose2d(128, 64, 4, stride=2, padding=1, bias=False)
        self.conv4 = nn.ConvTranspose2d(64, 1, 4, stride=2, padding=1, bias=False)
        self.batch_norm1, self.batch_norm2, self.batch_norm3 = nn.BatchNorm2d(256), nn.BatchNorm2d(128), nn.BatchNorm2d(64)

    def forward(self, x):
        x = torch.relu(self.batch_norm1(self.conv1(x)))
        x = torch.relu(self.batch_norm2(self.conv2(x)))
        x = torch.relu(self.batch_norm3(self.conv3(x)))
        return torch.tanh(self.conv4(x))


def discriminator():
    return nn.Sequential(
        nn.Conv2d(1, 64, 4, 2, 1, bias=False), nn.LeakyReLU(0.2),
        nn.Conv2d(64, 128, 4, 2, 1, bias=False), nn.BatchNorm2d(128), nn.LeakyReLU(0.2),
        nn.Conv2d(128, 256, 4, 2, 1, bias=False), nn.BatchNorm2d(256), nn.LeakyReLU(0.2),
        nn.Conv2d(256, 1, 3, 1, 0, bias=False), nn.Sigmoid())


def main():
    d = sys.argv[1]
    g = Generator()
    g.load_state_dict(torch.load(os.path.join(d, "generator-checkpoint.pt")))
    disc = discriminator()
    disc.load_state_dict(torch.load(os.path.join(d, "discriminator-checkpoint.pt")))
    g.eval()
    disc.eval()
    with torch.no_grad():
        score = disc(g(torch.randn(4, 100, 1, 1)))
    sample = torch.load(os.path.join(d, "dcgan-sample-1.pt"))
    ok = score.shape == (4, 1, 1, 1) and tuple(sample.shape) == (10, 1, 28, 28) and \
        0 <= sample.min().item() and sample.max().item() <= 1
    print("ok" if ok else "FAIL: scores {} sample {}".format(score.shape, sample.shape))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
