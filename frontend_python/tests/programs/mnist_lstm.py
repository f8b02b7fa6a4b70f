"""MNIST digits with an LSTM that reads each image row by row (28 time steps of 28 pixels), the
classic sequence-classification exercise: nn.LSTM(batch_first=True), the last step's output into a
Linear, cross entropy, Adam.

Reads images from an .npz file (uint8 `train_images` (N, 28, 28), `train_labels`, `test_images`,
`test_labels`).
"""
import argparse
import json

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, num_classes):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_size, num_classes)

    def forward(self, x):
        # Set initial hidden and cell states
        h0 = torch.zeros(self.num_layers, x.size(0), self.hidden_size).to(x.device)
        c0 = torch.zeros(self.num_layers, x.size(0), self.hidden_size).to(x.device)

        # Forward propagate LSTM
        out, _ = self.lstm(x, (h0, c0))  # out: tensor of shape (batch_size, seq_length, hidden_size)

        # Decode the hidden state of the last time step
        out = self.fc(out[:, -1, :])
        return out


def load_split(path, split):
    with np.load(path) as f:
        images = torch.tensor(f[split + '_images'], dtype=torch.float32) / 255.0
        labels = torch.from_numpy(f[split + '_labels'])
    return TensorDataset((images - 0.1307) / 0.3081, labels)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='MNIST rows as a sequence, classified by an LSTM')
    parser.add_argument('--data', default='mnist.npz')
    parser.add_argument('--hidden-size', type=int, default=128)
    parser.add_argument('--num-layers', type=int, default=2)
    parser.add_argument('--batch-size', type=int, default=100)
    parser.add_argument('--epochs', type=int, default=2)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--no-shuffle', action='store_true')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--init-weights', default=None)
    parser.add_argument('--log', default=None)
    return parser.parse_args(argv)


sequence_length = 28
input_size = 28
num_classes = 10


def build_model(args):
    return RNN(input_size, args.hidden_size, args.num_layers, num_classes)


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

    train_dataset = load_split(args.data, 'train')
    test_dataset = load_split(args.data, 'test')
    train_loader = DataLoader(dataset=train_dataset, batch_size=args.batch_size, shuffle=not args.no_shuffle)
    test_loader = DataLoader(dataset=test_dataset, batch_size=args.batch_size, shuffle=False)

    model = build_model(args)
    if args.init_weights:
        model.load_state_dict(torch.load(args.init_weights))
    model = model.to(device)

    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    log = {'train_loss': [], 'test_accuracy': []}
    total_step = len(train_loader)
    for epoch in range(args.epochs):
        model.train()
        for i, (images, labels) in enumerate(train_loader):
            images = images.reshape(-1, sequence_length, input_size).to(device)
            labels = labels.to(device)

            # Forward pass
            outputs = model(images)
            loss = criterion(outputs, labels)

            # Backward and optimize
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            log['train_loss'].append(loss.item())

            if (i + 1) % 2 == 0:
                print('Epoch [{}/{}], Step [{}/{}], Loss: {:.4f}'
                      .format(epoch + 1, args.epochs, i + 1, total_step, loss.item()))

        # Test the model
        model.eval()
        with torch.no_grad():
            correct = 0
            total = 0
            for images, labels in test_loader:
                images = images.reshape(-1, sequence_length, input_size).to(device)
                labels = labels.to(device)
                outputs = model(images)
                _, predicted = torch.max(outputs.data, 1)
                total += labels.size(0)
                correct += (predicted == labels).sum().item()
            print('Test Accuracy of the model on the {} test images: {} %'.format(total, 100 * correct / total))
            log['test_accuracy'].append(100 * correct / total)

    torch.save(model.state_dict(), 'model.ckpt')
    if args.log:
        with open(args.log, 'w') as f:
            json.dump(log, f)


if __name__ == '__main__':
    main()
