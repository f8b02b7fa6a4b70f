"""A ResNet-18-shaped CNN (ImageNet layout: 7x7 stem, max pool, four stages
of two basic blocks, global average pool, a linear classifier), trained with
SGD with momentum on cross-entropy.

The model code is written once against the PyTorch API and built with
whichever library is passed in as `torch` (loom or PyTorch).
"""

NAME = "resnet18"

# ImageNet-sized convolutions: 224 x 224 inputs (a small batch on the CPU).
CONFIGS = {
    "cpu": dict(batch=4, size=224, classes=1000, lr=0.1),
    "cuda": dict(batch=64, size=224, classes=1000, lr=0.1),
    "small": dict(batch=2, size=64, classes=10, lr=0.1),
}
HAS_INFERENCE = False


def build(torch, cfg):
    nn = torch.nn

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, stride=1, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                                nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + identity)

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
            layers, cin = [], 64
            for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                layers.append(nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)))
                cin = cout
            self.layer1, self.layer2, self.layer3, self.layer4 = layers
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512, cfg["classes"])

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    return ResNet18()


def batch(torch, cfg, device, rng):
    import numpy as np
    images = rng.standard_normal((cfg["batch"], 3, cfg["size"], cfg["size"])).astype(np.float32)
    labels = rng.integers(0, cfg["classes"], cfg["batch"])
    return torch.tensor(images).to(device), torch.tensor(labels).to(device)


def loss(torch, model, inputs, targets):
    return torch.nn.functional.cross_entropy(model(inputs), targets)


def optimizer(torch, model, cfg):
    return torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=1e-4)
