"""Learns sine waves with two stacked LSTMCells and predicts their future, in the manner of
pytorch/examples' time_sequence_prediction (generate_sine_wave.py's data, train.py's model):
float64 throughout, a Python loop over time steps, LBFGS with optimizer.step(closure), then
predicting `--future` steps beyond the input from the model's own outputs.

Reads the waves from a file written by torch.save of a numpy array (--data).
"""
from __future__ import print_function

import argparse
import json

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Sequence(nn.Module):
    def __init__(self, hidden=51):
        super(Sequence, self).__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        c_t = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), self.hidden, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), self.hidden, dtype=torch.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):  # if we should predict the future
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


def parse_args(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--data', default='traindata.pt')
    parser.add_argument('--steps', type=int, default=15, help='steps to run')
    parser.add_argument('--hidden', type=int, default=51)
    parser.add_argument('--lr', type=float, default=0.8)
    parser.add_argument('--max-iter', type=int, default=20, help="LBFGS's evaluations per step")
    parser.add_argument('--future', type=int, default=1000)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--init-weights', default=None)
    parser.add_argument('--log', default=None)
    return parser.parse_args(argv)


def build_model(args):
    seq = Sequence(args.hidden)
    seq.double()
    return seq


def main(argv=None):
    opt = parse_args(argv)
    # set random seed to 0
    np.random.seed(opt.seed)
    torch.manual_seed(opt.seed)
    # load data and make training set
    data = torch.load(opt.data)
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    # build the model
    seq = build_model(opt)
    if opt.init_weights:
        seq.load_state_dict(torch.load(opt.init_weights))
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(seq.parameters(), lr=opt.lr, max_iter=opt.max_iter)
    log = {'loss': [], 'test_loss': []}
    # begin to train
    for i in range(opt.steps):
        print('STEP: ', i)

        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            print('loss:', loss.item())
            log['loss'].append(loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        # begin to predict, no need to track gradient here
        with torch.no_grad():
            future = opt.future
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print('test loss:', loss.item())
            log['test_loss'].append(loss.item())
            y = pred.detach().numpy()
        np.save('predict%d.npy' % i, y)
    log['prediction_tail'] = y[:, -5:].tolist()
    if opt.log:
        with open(opt.log, 'w') as f:
            json.dump(log, f)


if __name__ == '__main__':
    main()
