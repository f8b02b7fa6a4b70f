"""nn.RNN / LSTM / GRU, their cells and packed sequences against PyTorch 1.13: same weights (copied
by name, so the parameter names must be PyTorch's), same inputs; outputs, final states and every
gradient must agree."""
import numpy as np
import pytest

import loom
import loom.nn as nn
from loom.nn.utils import rnn as rnn_utils

torch = pytest.importorskip("torch", reason="PyTorch is the oracle for these tests")

RTOL, ATOL = 1e-4, 1e-5
# The device loom runs on (PyTorch, the oracle, runs on the CPU): cuda adds cuDNN's kernels.
DEVICES = ["cpu"] + (["cuda"] if loom.cuda.is_available() else [])


def copy_params(lm, tm):
    lnames = [n for n, _ in lm.named_parameters()]
    tnames = [n for n, _ in tm.named_parameters()]
    assert lnames == tnames
    for p, tp in zip(lm.parameters(), tm.parameters()):
        with loom.no_grad():
            p.copy_(loom.tensor(tp.detach().numpy()))


def close(a, b):
    np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().numpy(), rtol=RTOL, atol=ATOL)


def states(h, lstm):
    return [h[0], h[1]] if lstm else [h]


def check_grads(lm, tm, pairs):
    for a, b in pairs:
        close(a.grad, b.grad)
    for (n, p), (_, tp) in zip(lm.named_parameters(), tm.named_parameters()):
        close(p.grad, tp.grad)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN", "RNN_relu"])
@pytest.mark.parametrize("layers,bidirectional,batch_first,bias", [(1, False, False, True), (2, True, False, True),
                                                                   (2, False, True, False), (3, True, True, True)])
def test_sequence_layers_match_pytorch(mode, layers, bidirectional, batch_first, bias, device):
    kwargs = dict(num_layers=layers, bidirectional=bidirectional, batch_first=batch_first, bias=bias)
    if mode == "RNN_relu":
        mode, kwargs["nonlinearity"] = "RNN", "relu"
    lm, tm = getattr(nn, mode)(5, 6, **kwargs), getattr(torch.nn, mode)(5, 6, **kwargs)
    copy_params(lm, tm)
    lm.to(device)
    lstm = mode == "LSTM"
    x = np.random.RandomState(0).randn(3, 4, 5).astype(np.float32)
    D = 2 if bidirectional else 1
    h0 = np.random.RandomState(1).randn(layers * D, 3 if batch_first else 4, 6).astype(np.float32)
    lx, tx = loom.tensor(x, device=device).requires_grad_(), torch.tensor(x, requires_grad=True)
    lh0, th0 = loom.tensor(h0, device=device).requires_grad_(), torch.tensor(h0, requires_grad=True)
    lhx, thx = ((lh0, lh0 * 0.5), (th0, th0 * 0.5)) if lstm else (lh0, th0)
    lo, lh = lm(lx, lhx)
    to, th = tm(tx, thx)
    close(lo, to)
    for a, b in zip(states(lh, lstm), states(th, lstm)):
        close(a, b)
    weights = np.random.RandomState(2).randn(*to.shape).astype(np.float32)
    (lo * loom.tensor(weights, device=device)).sum().backward(retain_graph=True)
    (to * torch.tensor(weights)).sum().backward(retain_graph=True)
    sum(s.sum() for s in states(lh, lstm)).backward()
    sum(s.sum() for s in states(th, lstm)).backward()
    check_grads(lm, tm, [(lx, tx), (lh0, th0)])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequences_match_pytorch(mode, enforce_sorted, device):
    lm = getattr(nn, mode)(4, 5, num_layers=2, bidirectional=True)
    tm = getattr(torch.nn, mode)(4, 5, num_layers=2, bidirectional=True)
    copy_params(lm, tm)
    lm.to(device)
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    x = np.random.RandomState(3).randn(5, 4, 4).astype(np.float32)
    lx, tx = loom.tensor(x, device=device).requires_grad_(), torch.tensor(x, requires_grad=True)
    lp = rnn_utils.pack_padded_sequence(lx, lengths, enforce_sorted=enforce_sorted)
    tp = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, enforce_sorted=enforce_sorted)
    assert lp.batch_sizes.tolist() == tp.batch_sizes.tolist()
    close(lp.data, tp.data)
    lo, lh = lm(lp)
    to, th = tm(tp)
    assert isinstance(lo, rnn_utils.PackedSequence)
    close(lo.data, to.data)
    lpad, llen = rnn_utils.pad_packed_sequence(lo, batch_first=True, padding_value=-1.0)
    tpad, tlen = torch.nn.utils.rnn.pad_packed_sequence(to, batch_first=True, padding_value=-1.0)
    close(lpad, tpad)
    assert llen.tolist() == tlen.tolist()
    lstm = mode == "LSTM"
    for a, b in zip(states(lh, lstm), states(th, lstm)):
        close(a, b)
    (lpad * lpad).sum().backward()
    (tpad * tpad).sum().backward()
    check_grads(lm, tm, [(lx, tx)])


def test_pack_helpers_match_pytorch():
    seqs = [np.random.RandomState(i).randn(n, 2).astype(np.float32) for i, n in enumerate([4, 2, 3])]
    lp = rnn_utils.pad_sequence([loom.tensor(s) for s in seqs], batch_first=True, padding_value=9.0)
    tp = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], batch_first=True, padding_value=9.0)
    close(lp, tp)
    lpk = rnn_utils.pack_sequence([loom.tensor(s) for s in seqs], enforce_sorted=False)
    tpk = torch.nn.utils.rnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    close(lpk.data, tpk.data)
    assert lpk.sorted_indices.tolist() == tpk.sorted_indices.tolist()
    assert lpk.unsorted_indices.tolist() == tpk.unsorted_indices.tolist()
    back = rnn_utils.unpack_sequence(lpk)
    for b, s in zip(back, seqs):
        np.testing.assert_array_equal(b.numpy(), s)
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        rnn_utils.pack_padded_sequence(loom.zeros(3, 2, 1), [1, 3])
    with pytest.raises(RuntimeError, match="greater than 0"):
        rnn_utils.pack_padded_sequence(loom.zeros(3, 2, 1), [3, 0])


@pytest.mark.parametrize("cell", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cells_match_pytorch(cell):
    lm, tm = getattr(nn, cell)(3, 4), getattr(torch.nn, cell)(3, 4)
    copy_params(lm, tm)
    x = np.random.RandomState(4).randn(2, 3).astype(np.float32)
    lx, tx = loom.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    lh, th = lm(lx), tm(tx)
    lh, th = (lm(lx, lh), tm(tx, th))  # a second step from the first's state
    lout = lh[0] * 2 + lh[1] if cell == "LSTMCell" else lh
    tout = th[0] * 2 + th[1] if cell == "LSTMCell" else th
    close(lout, tout)
    lout.sum().backward()
    tout.sum().backward()
    check_grads(lm, tm, [(lx, tx)])
    single = lm(lx[0])  # unbatched
    assert (single[0] if cell == "LSTMCell" else single).shape == (4,)


def test_unbatched_input_and_default_states():
    m = nn.GRU(3, 4, num_layers=2)
    out, h = m(loom.randn(5, 3))
    assert tuple(out.shape) == (5, 4) and tuple(h.shape) == (2, 4)
    m = nn.LSTM(3, 4, batch_first=True)
    out, (h, c) = m(loom.randn(2, 5, 3))
    assert tuple(out.shape) == (2, 5, 4) and tuple(h.shape) == (1, 2, 4) and tuple(c.shape) == (1, 2, 4)


def test_dropout_between_layers_only_in_training():
    loom.manual_seed(0)
    m = nn.LSTM(3, 8, num_layers=3, dropout=0.5)
    x = loom.randn(4, 2, 3)
    m.eval()
    a, _ = m(x)
    b, _ = m(x)
    assert a.tolist() == b.tolist()
    m.train()
    c, _ = m(x)
    assert c.tolist() != a.tolist()
    c.sum().backward()
    assert all(p.grad is not None for p in m.parameters())


def test_bad_arguments_are_named():
    m = nn.LSTM(3, 4)
    with pytest.raises(RuntimeError, match="input_size. Expected 3, got 5"):
        m(loom.randn(2, 1, 5))
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        m(loom.randn(2, 1, 3), (loom.zeros(1, 2, 4), loom.zeros(1, 2, 4)))
    with pytest.raises(RuntimeError, match="tuple"):
        m(loom.randn(2, 1, 3), loom.zeros(1, 1, 4))
    with pytest.raises(RuntimeError, match="one dtype"):
        loom._rnn(loom.randn(2, 1, 3, dtype=loom.float64), loom.zeros(1, 1, 4), loom.zeros(1, 1, 4),
                  list(m.parameters()), "LSTM", True, 1, False, False, None)
    with pytest.raises(RuntimeError, match="unknown mode 'LSTMX'"):
        loom._rnn(loom.randn(2, 1, 3), loom.zeros(1, 1, 4), None, list(m.parameters()), "LSTMX", True, 1, False,
                  False, None)
    with pytest.raises(ValueError, match="dropout"):
        nn.LSTM(3, 4, dropout=2)
    with pytest.raises(NotImplementedError, match="proj_size"):
        nn.LSTM(3, 4, proj_size=2)


def test_state_dict_moves_between_pytorch_and_loom():
    tm = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    lm = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    lm.load_state_dict({k: loom.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = np.random.RandomState(5).randn(6, 2, 3).astype(np.float32)
    close(lm(loom.tensor(x))[0], tm(torch.tensor(x))[0])
