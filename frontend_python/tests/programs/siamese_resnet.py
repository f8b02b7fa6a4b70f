"""A siamese network that tells whether two MNIST digits show the same number, in the manner of
pytorch/examples' siamese_network/main.py, with a small ResNet written out by hand (BasicBlock,
BatchNorm2d, AdaptiveAvgPool2d) instead of torchvision's resnet18. The two embeddings are
concatenated, a small MLP scores the pair and BCEWithLogitsLoss trains it; Adam with StepLR.

Reads images from an .npz file (uint8 `train_images` (N, 28, 28), `train_labels`, `test_images`,
`test_labels`); the pairs are drawn once, from a generator seeded by --seed.
"""
import argparse
import json
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, Dataset


def conv3x3(in_planes, out_planes, stride=1):
    """3x3 convolution with padding"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)

        if self.downsample is not None:
            identity = self.downsample(x)

        out += identity
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    """A three-stage ResNet for 28x28 images, laid out as torchvision's (stem, layers, avgpool, fc)."""

    def __init__(self, block, layers, widths=(16, 32, 64), in_channels=3, num_classes=1000):
        super().__init__()
        self.inplanes = widths[0]
        self.conv1 = nn.Conv2d(in_channels, self.inplanes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = self._make_layer(block, widths[0], layers[0])
        self.layer2 = self._make_layer(block, widths[1], layers[1], stride=2)
        self.layer3 = self._make_layer(block, widths[2], layers[2], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(widths[2] * block.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * block.expansion, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.fc(x)
        return x


def resnet_small(widths=(16, 32, 64), **kwargs):
    return ResNet(BasicBlock, [1, 1, 1], widths, **kwargs)


class SiameseNetwork(nn.Module):
    def __init__(self, widths=(16, 32, 64)):
        super(SiameseNetwork, self).__init__()
        # get resnet model
        self.resnet = resnet_small(widths)

        # over-write the first conv layer to be able to read MNIST images
        # as resnet reads (3, x, x) where 3 is RGB channels
        # whereas MNIST has (1, x, x) where 1 is a gray-scale channel
        self.resnet.conv1 = nn.Conv2d(1, widths[0], kernel_size=3, stride=1, padding=1, bias=False)
        self.fc_in_features = self.resnet.fc.in_features

        # remove the last layer of resnet (linear layer which is before avgpool layer)
        self.resnet = torch.nn.Sequential(*(list(self.resnet.children())[:-1]))

        # add linear layers to compare between the features of the two images
        self.fc = nn.Sequential(
            nn.Linear(self.fc_in_features * 2, 256),
            nn.ReLU(inplace=True),
            nn.Linear(256, 1),
        )

        # initialize the weights
        self.fc.apply(self.init_weights)

    def init_weights(self, m):
        if isinstance(m, nn.Linear):
            torch.nn.init.xavier_uniform_(m.weight)
            m.bias.data.fill_(0.01)

    def forward_once(self, x):
        output = self.resnet(x)
        output = output.view(output.size()[0], -1)
        return output

    def forward(self, input1, input2):
        # get two images' features
        output1 = self.forward_once(input1)
        output2 = self.forward_once(input2)

        # concatenate both images' features
        output = torch.cat((output1, output2), 1)

        # pass the concatenation to the linear layers; a logit, not a probability
        output = self.fc(output)
        return output


class APP_MATCHER(Dataset):
    """Pairs of images with target 1 (same digit) or 0 (different), half of each."""

    def __init__(self, path, train, seed):
        split = 'train' if train else 'test'
        with np.load(path) as f:
            self.data = torch.from_numpy(f[split + '_images']).float().div(255).sub(0.1307).div(0.3081)
            self.targets = torch.from_numpy(f[split + '_labels'])
        self.group_examples()
        rng = random.Random(seed)
        self.pairs = [self.draw_pair(rng, i) for i in range(len(self.data))]

    def group_examples(self):
        np_arr = np.array(self.targets.clone())
        self.grouped_examples = {}
        for i in range(0, 10):
            self.grouped_examples[i] = np.where((np_arr == i))[0]

    def draw_pair(self, rng, index):
        selected_class = rng.randint(0, 9)
        index_1 = self.grouped_examples[selected_class][rng.randint(0, len(self.grouped_examples[selected_class]) - 1)]
        if index % 2 == 0:
            other_class = selected_class
        else:
            other_class = rng.randint(0, 9)
            while other_class == selected_class:
                other_class = rng.randint(0, 9)
        index_2 = self.grouped_examples[other_class][rng.randint(0, len(self.grouped_examples[other_class]) - 1)]
        return index_1, index_2, float(other_class == selected_class)  # numpy int64 indices

    def __len__(self):
        return self.data.shape[0]

    def __getitem__(self, index):
        index_1, index_2, same = self.pairs[index]
        image_1 = self.data[index_1].clone().float().unsqueeze(0)
        image_2 = self.data[index_2].clone().float().unsqueeze(0)
        return image_1, image_2, torch.tensor(same, dtype=torch.float)


def train(args, model, device, train_loader, optimizer, epoch, losses):
    model.train()
    criterion = nn.BCEWithLogitsLoss()
    for batch_idx, (images_1, images_2, targets) in enumerate(train_loader):
        images_1, images_2, targets = images_1.to(device), images_2.to(device), targets.to(device)
        optimizer.zero_grad()
        outputs = model(images_1, images_2).squeeze()
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(images_1), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for (images_1, images_2, targets) in test_loader:
            images_1, images_2, targets = images_1.to(device), images_2.to(device), targets.to(device)
            outputs = torch.sigmoid(model(images_1, images_2)).squeeze()
            test_loss += F.binary_cross_entropy(outputs, targets, reduction='sum').item()  # sum up batch loss
            pred = torch.where(outputs > 0.5, 1, 0)  # get the index of the max log-probability
            correct += pred.eq(targets.view_as(pred)).sum().item()

    test_loss /= len(test_loader.dataset)
    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))
    return test_loss, correct


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='PyTorch Siamese network Example')
    parser.add_argument('--data', default='mnist.npz')
    parser.add_argument('--batch-size', type=int, default=64, metavar='N')
    parser.add_argument('--test-batch-size', type=int, default=1000, metavar='N')
    parser.add_argument('--epochs', type=int, default=14, metavar='N')
    parser.add_argument('--lr', type=float, default=1e-3, metavar='LR')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M')
    parser.add_argument('--widths', type=int, nargs=3, default=[16, 32, 64])
    parser.add_argument('--no-shuffle', action='store_true', default=False)
    parser.add_argument('--no-cuda', action='store_true', default=False)
    parser.add_argument('--no-mps', action='store_true', default=False, help='disables macOS GPU training')
    parser.add_argument('--seed', type=int, default=1, metavar='S')
    parser.add_argument('--log-interval', type=int, default=10, metavar='N')
    parser.add_argument('--save-model', action='store_true', default=False)
    parser.add_argument('--init-weights', default=None)
    parser.add_argument('--log', default=None)
    return parser.parse_args(argv)


def build_model(args):
    return SiameseNetwork(tuple(args.widths))


def main(argv=None):
    args = parse_args(argv)
    use_cuda = not args.no_cuda and torch.cuda.is_available()
    use_mps = not args.no_mps and torch.backends.mps.is_available()
    torch.manual_seed(args.seed)
    if use_cuda:
        device = torch.device("cuda")
    elif use_mps:
        device = torch.device("mps")
    else:
        device = torch.device("cpu")

    train_kwargs = {'batch_size': args.batch_size, 'shuffle': not args.no_shuffle}
    test_kwargs = {'batch_size': args.test_batch_size}
    if use_cuda:
        cuda_kwargs = {'num_workers': 1, 'pin_memory': True}
        train_kwargs.update(cuda_kwargs)
        test_kwargs.update(cuda_kwargs)

    train_dataset = APP_MATCHER(args.data, train=True, seed=args.seed)
    test_dataset = APP_MATCHER(args.data, train=False, seed=args.seed + 1)
    train_loader = DataLoader(train_dataset, **train_kwargs)
    test_loader = DataLoader(test_dataset, **test_kwargs)

    model = build_model(args)
    if args.init_weights:
        model.load_state_dict(torch.load(args.init_weights))
    model = model.to(device)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)

    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    log = {'train_loss': [], 'test_loss': [], 'correct': []}
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch, log['train_loss'])
        test_loss, correct = test(model, device, test_loader)
        log['test_loss'].append(test_loss)
        log['correct'].append(correct)
        scheduler.step()

    log['num_batches_tracked'] = int(model.resnet[1].num_batches_tracked)
    if args.save_model:
        torch.save(model.state_dict(), "siamese_network.pt")
    if args.log:
        with open(args.log, 'w') as f:
            json.dump(log, f)


if __name__ == '__main__':
    main()
