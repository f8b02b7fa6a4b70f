"""A variational autoencoder on MNIST, in the manner of pytorch/examples' vae/main.py: a 784-400-20
encoder giving mu and log-variance, the reparameterisation trick, a 20-400-784 sigmoid decoder,
and the loss BCE(reconstruction, input, reduction='sum') + KL divergence.

Reads images from an .npz file (uint8 `train_images` (N, 28, 28), `test_images`). With
--noise-seed the reparameterisation noise comes from numpy's generator (so runs on different
frameworks draw the same noise) instead of torch.randn_like.
"""
import argparse
import json

import numpy as np
import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()

        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)
        self.noise_rng = None  # a numpy Generator, or None for torch.randn_like

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        if self.noise_rng is None:
            eps = torch.randn_like(std)
        else:
            eps = torch.from_numpy(self.noise_rng.standard_normal(tuple(std.shape))).to(std.dtype)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')

    # see Appendix B from VAE paper:
    # Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
    # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())

    return BCE + KLD


class MNISTImages(torch.utils.data.Dataset):
    """Images in [0, 1] as (1, 28, 28) tensors, labels alongside (unused by the VAE)."""

    def __init__(self, path, train=True):
        split = 'train' if train else 'test'
        with np.load(path) as f:
            self.images = f[split + '_images']
            self.labels = f[split + '_labels']

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return torch.from_numpy(self.images[i]).unsqueeze(0).float() / 255, int(self.labels[i])


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='VAE MNIST Example')
    parser.add_argument('--data', default='mnist.npz')
    parser.add_argument('--batch-size', type=int, default=128, metavar='N')
    parser.add_argument('--epochs', type=int, default=10, metavar='N')
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--no-cuda', action='store_true', default=False)
    parser.add_argument('--no-mps', action='store_true', default=False, help='disables macOS GPU training')
    parser.add_argument('--no-shuffle', action='store_true', default=False)
    parser.add_argument('--seed', type=int, default=1, metavar='S')
    parser.add_argument('--noise-seed', type=int, default=None,
                        help='draw the reparameterisation noise with numpy, seeded so')
    parser.add_argument('--log-interval', type=int, default=10, metavar='N')
    parser.add_argument('--init-weights', default=None)
    parser.add_argument('--log', default=None)
    return parser.parse_args(argv)


def build_model(args):
    return VAE()


def main(argv=None):
    args = parse_args(argv)
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    use_mps = not args.no_mps and torch.backends.mps.is_available()
    torch.manual_seed(args.seed)
    if args.cuda:
        device = torch.device("cuda")
    elif use_mps:
        device = torch.device("mps")
    else:
        device = torch.device("cpu")

    kwargs = {'num_workers': 1, 'pin_memory': True} if args.cuda else {}
    train_loader = torch.utils.data.DataLoader(MNISTImages(args.data, train=True), batch_size=args.batch_size,
                                               shuffle=not args.no_shuffle, **kwargs)
    test_loader = torch.utils.data.DataLoader(MNISTImages(args.data, train=False), batch_size=args.batch_size,
                                              shuffle=False, **kwargs)

    model = build_model(args)
    if args.init_weights:
        model.load_state_dict(torch.load(args.init_weights))
    model = model.to(device)
    if args.noise_seed is not None:
        model.noise_rng = np.random.default_rng(args.noise_seed)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    log = {'train_loss': [], 'epoch_loss': [], 'test_loss': []}

    def train(epoch):
        model.train()
        train_loss = 0
        for batch_idx, (data, _) in enumerate(train_loader):
            data = data.to(device)
            optimizer.zero_grad()
            recon_batch, mu, logvar = model(data)
            loss = loss_function(recon_batch, data, mu, logvar)
            loss.backward()
            train_loss += loss.item()
            optimizer.step()
            log['train_loss'].append(loss.item() / len(data))
            if batch_idx % args.log_interval == 0:
                print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                    epoch, batch_idx * len(data), len(train_loader.dataset),
                    100. * batch_idx / len(train_loader),
                    loss.item() / len(data)))

        print('====> Epoch: {} Average loss: {:.4f}'.format(
              epoch, train_loss / len(train_loader.dataset)))
        log['epoch_loss'].append(train_loss / len(train_loader.dataset))

    def test(epoch):
        model.eval()
        test_loss = 0
        with torch.no_grad():
            for i, (data, _) in enumerate(test_loader):
                data = data.to(device)
                recon_batch, mu, logvar = model(data)
                test_loss += loss_function(recon_batch, data, mu, logvar).item()
                if i == 0:
                    n = min(data.size(0), 8)
                    comparison = torch.cat([data[:n],
                                            recon_batch.view(data.size(0), 1, 28, 28)[:n]])
                    np.save('reconstruction_' + str(epoch) + '.npy', comparison.cpu().numpy())

        test_loss /= len(test_loader.dataset)
        print('====> Test set loss: {:.4f}'.format(test_loss))
        log['test_loss'].append(test_loss)

    for epoch in range(1, args.epochs + 1):
        train(epoch)
        test(epoch)
        with torch.no_grad():
            sample = torch.randn(64, 20).to(device)
            sample = model.decode(sample).cpu()
            np.save('sample_' + str(epoch) + '.npy', sample.view(64, 1, 28, 28).numpy())
            # decoded noise differs between frameworks' generators; its range does not
            assert 0.0 <= sample.min().item() and sample.max().item() <= 1.0

    if args.log:
        with open(args.log, 'w') as f:
            json.dump(log, f)


if __name__ == "__main__":
    main()
