#!/usr/bin/env python
"""Fits a polynomial y = w1 x + w2 x^2 + w3 x^3 + w4 x^4 + b with one Linear layer over the powers
of x, in the manner of pytorch/examples' regression/main.py: smooth L1 loss, a hand-written SGD
step on param.data, stop when the loss falls under a threshold.

With --data, the target coefficients and the x of every batch come from an .npz file (`w_target`
(4, 1), `b_target` (1,), `x` (batches, batch_size)); without it they are drawn with torch.randn.
"""
from __future__ import print_function

import argparse
import json
from itertools import count

import numpy as np
import torch
import torch.nn.functional as F

POLY_DEGREE = 4


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)


def poly_desc(W, b):
    """Creates a string description of a polynomial."""
    result = 'y = '
    for i, w in enumerate(W):
        result += '{:+.2f} x^{} '.format(w, i + 1)
    result += '{:+.2f}'.format(b[0])
    return result


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='polynomial regression')
    parser.add_argument('--data', default=None)
    parser.add_argument('--lr', type=float, default=0.1)
    parser.add_argument('--batch-size', type=int, default=32)
    parser.add_argument('--max-batches', type=int, default=None)
    parser.add_argument('--threshold', type=float, default=1e-3)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--init-weights', default=None)
    parser.add_argument('--log', default=None)
    return parser.parse_args(argv)


def build_model(args):
    return torch.nn.Linear(POLY_DEGREE, 1)


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    if args.data:
        data = np.load(args.data)
        W_target = torch.from_numpy(data['w_target'])
        b_target = torch.from_numpy(data['b_target'])
        xs = torch.from_numpy(data['x'])
    else:
        W_target = torch.randn(POLY_DEGREE, 1) * 5
        b_target = torch.randn(1) * 5
        xs = None

    def f(x):
        """Approximated function."""
        return x.mm(W_target) + b_target.item()

    def get_batch(batch_idx):
        """Builds a batch i.e. (x, f(x)) pair."""
        random = xs[batch_idx - 1] if xs is not None else torch.randn(args.batch_size)
        x = make_features(random)
        y = f(x)
        return x, y

    # Define model
    fc = build_model(args)
    if args.init_weights:
        fc.load_state_dict(torch.load(args.init_weights))

    losses = []
    for batch_idx in count(1):
        # Get data
        batch_x, batch_y = get_batch(batch_idx)

        # Reset gradients
        fc.zero_grad()

        # Forward pass
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        losses.append(loss)

        # Backward pass
        output.backward()

        # Apply gradients
        for param in fc.parameters():
            param.data.add_(-args.lr * param.grad)

        # Stop criterion
        if loss < args.threshold or batch_idx == args.max_batches:
            break

    print('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
    print('==> Learned function:\t' + poly_desc(fc.weight.view(-1), fc.bias))
    print('==> Actual function:\t' + poly_desc(W_target.view(-1), b_target))
    if args.log:
        with open(args.log, 'w') as log_file:
            json.dump({'loss': losses, 'learned': poly_desc(fc.weight.view(-1), fc.bias)}, log_file)


if __name__ == '__main__':
    main()
