"""Prints the expected values pasted into nn_layers_test.cpp / nn_transformer_test.cpp.

Run with Debian's python3-torch: /usr/bin/python3 nn_reference_values.py
Every parameter and input comes from pattern() (the C++ tests compute the
same numbers), so no random state is shared between the two.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_printoptions(precision=8)


def pattern(shape, salt, scale=1.0):
    n = 1
    for s in shape:
        n *= s
    vals = [(((j * 7 + salt * 3 + 1) % 13) / 6.0 - 1.0) * scale for j in range(n)]
    return torch.tensor(vals, dtype=torch.float32).reshape(shape)


def fill_params(module):
    with torch.no_grad():
        for i, (_, p) in enumerate(module.named_parameters()):
            p.copy_(pattern(p.shape, i, 0.5))


def show(name, t):
    vals = ", ".join(f"{v:.7g}" for v in t.detach().reshape(-1).tolist())
    print(f"// {name} {list(t.shape)}\n{{{vals}}}")


def layer(name, m, *inputs):
    fill_params(m)
    out = m(*inputs)
    show(name, out)
    return out


x23 = pattern((2, 3), 100)
layer("Linear(3,2)", nn.Linear(3, 2), x23)
layer("Bilinear(3,2,2)", nn.Bilinear(3, 2, 2), x23, pattern((2, 2), 101))
layer("Conv1d(2,3,2,padding=1)", nn.Conv1d(2, 3, 2, padding=1), pattern((1, 2, 4), 102))
layer("Conv2d(2,2,3,stride=2,padding=1)", nn.Conv2d(2, 2, 3, stride=2, padding=1), pattern((1, 2, 5, 5), 103))
layer("Conv2d(4,2,(1,2),groups=2,bias=False)", nn.Conv2d(4, 2, (1, 2), groups=2, bias=False),
      pattern((1, 4, 2, 3), 104))
layer("ConvTranspose2d(2,3,3,stride=2,padding=1,output_padding=1)",
      nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1), pattern((1, 2, 2, 2), 105))
layer("LayerNorm([4])", nn.LayerNorm([4]), pattern((2, 4), 106))
layer("GroupNorm(2,4)", nn.GroupNorm(2, 4), pattern((2, 4, 3), 107))
layer("GELU(tanh)", nn.GELU(approximate="tanh"), x23)
layer("SiLU", nn.SiLU(), x23)
layer("Softmax(1)", nn.Softmax(1), x23)
layer("LogSoftmax(0)", nn.LogSoftmax(0), x23)
p4 = pattern((1, 1, 4, 5), 108)
layer("MaxPool2d(2)", nn.MaxPool2d(2), p4)
layer("AvgPool2d(3,stride=2,padding=1)", nn.AvgPool2d(3, stride=2, padding=1), p4)
layer("AdaptiveAvgPool2d((2,3))", nn.AdaptiveAvgPool2d((2, 3)), p4)

bn = nn.BatchNorm1d(3)
fill_params(bn)
b1, b2 = pattern((4, 3), 109), pattern((4, 3), 110)
show("BatchNorm1d train out 1", bn(b1))
bn(b2)
show("BatchNorm1d running_mean", bn.running_mean)
show("BatchNorm1d running_var", bn.running_var)
bn.eval()
show("BatchNorm1d eval out", bn(b1))
bn2 = nn.BatchNorm2d(2, momentum=None)
fill_params(bn2)
bn2(pattern((2, 2, 2, 2), 111))
bn2(pattern((2, 2, 2, 2), 112))
show("BatchNorm2d(momentum=None) running_var", bn2.running_var)

# Losses
logits = pattern((3, 4), 120)
tgt = torch.tensor([1, 0, 3])
w = torch.tensor([1.0, 2.0, 0.5, 1.5])
show("cross_entropy(weight, label_smoothing=0.1)", F.cross_entropy(logits, tgt, weight=w, label_smoothing=0.1))
show("cross_entropy(ignore_index=0, sum)", F.cross_entropy(logits, tgt, ignore_index=0, reduction="sum"))
show("nll_loss(none)", F.nll_loss(F.log_softmax(logits, 1), tgt, reduction="none"))
a, b = pattern((2, 3), 121), pattern((2, 3), 125, 0.7)
show("mse_loss", F.mse_loss(a, b))
show("l1_loss(sum)", F.l1_loss(a, b, reduction="sum"))
show("smooth_l1_loss(beta=0.5)", F.smooth_l1_loss(a, b, beta=0.5))
probs = torch.sigmoid(a)
t01 = (b > 0).float()
show("binary_cross_entropy", F.binary_cross_entropy(probs, t01))
show("bce_with_logits(pos_weight)", F.binary_cross_entropy_with_logits(a, t01, pos_weight=torch.tensor([1.0, 2.0, 3.0])))

# Attention
torch.manual_seed(0)
mha = nn.MultiheadAttention(4, 2, batch_first=True)
fill_params(mha)
q, k = pattern((2, 3, 4), 130), pattern((2, 2, 4), 131)
out, wts = mha(q, k, k)
show("MHA(4,2,batch_first) out", out)
show("MHA(4,2,batch_first) weights", wts)
kpm = torch.tensor([[False, True], [False, False]])
out, _ = mha(q, k, k, key_padding_mask=kpm, need_weights=False)
show("MHA key_padding_mask out", out)
print("// MHA keys", [n for n, _ in mha.named_parameters()])

for norm_first, act in ((False, "relu"), (True, "gelu")):
    enc = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, activation=act,
                                     batch_first=True, norm_first=norm_first)
    fill_params(enc)
    show(f"TransformerEncoderLayer(norm_first={norm_first}, {act})", enc(pattern((2, 3, 4), 132)))
print("// encoder keys", list(enc.state_dict().keys()))

# libtorch_compat_test.cpp: the modules and functional options libtorch programs use.
x24 = pattern((2, 4), 140)
layer("LeakyReLU(0.2)", nn.LeakyReLU(0.2), x24)
layer("ELU(alpha=0.5)", nn.ELU(alpha=0.5), x24)
layer("Softplus(beta=2,threshold=1)", nn.Softplus(beta=2, threshold=1), x24)
seq = pattern((2, 3, 3), 141)  # (batch, time, feature) with batch_first
lstm = nn.LSTM(3, 4, num_layers=2, batch_first=True)
fill_params(lstm)
out, (h, c) = lstm(seq)
show("LSTM(3,4,layers=2,batch_first) out", out)
show("LSTM h_n", h)
show("LSTM c_n", c)
print("// LSTM keys", list(lstm.state_dict().keys()))
gru = nn.GRU(3, 2, bidirectional=True)
fill_params(gru)
out, h = gru(seq, pattern((2, 3, 2), 142))
show("GRU(3,2,bidirectional) out", out)
show("GRU h_n", h)
rnn = nn.RNN(3, 2, nonlinearity="relu")
fill_params(rnn)
show("RNN(3,2,relu) out", rnn(seq)[0])
lc = nn.LSTMCell(3, 2)
fill_params(lc)
h, c = lc(pattern((2, 3), 143))
show("LSTMCell h", h)
show("LSTMCell c", c)
gc = nn.GRUCell(3, 2)
fill_params(gc)
show("GRUCell h", gc(pattern((2, 3), 143), pattern((2, 2), 144)))
img = pattern((1, 2, 3, 4), 145)
show("interpolate(size=(5,6), bilinear)", F.interpolate(img, size=(5, 6), mode="bilinear", align_corners=False))
show("interpolate(scale 2, nearest)", F.interpolate(img, scale_factor=2.0, mode="nearest"))
show("normalize(p=1, dim=1)", F.normalize(x24, p=1.0, dim=1))
show("cosine_similarity(dim=1)", F.cosine_similarity(x24, pattern((2, 4), 146), dim=1))
show("leaky_relu(0.1)", F.leaky_relu(x24, 0.1))
show("log_softmax(dim=1)", F.log_softmax(x24, dim=1))
show("nll_loss(kSum)", F.nll_loss(F.log_softmax(x24, dim=1), torch.tensor([3, 0]), reduction="sum"))
from torch.nn.utils import rnn as rnn_utils  # noqa: E402
padded = pattern((3, 4, 3), 147)  # batch_first, lengths 2, 4, 3
packed = rnn_utils.pack_padded_sequence(padded, torch.tensor([2, 4, 3]), batch_first=True, enforce_sorted=False)
print("// packed batch_sizes", packed.batch_sizes.tolist(), "sorted_indices", packed.sorted_indices.tolist())
show("packed data", packed.data)
plstm = nn.LSTM(3, 2, num_layers=2, bidirectional=True, batch_first=True)
fill_params(plstm)
pout, (ph, pc) = plstm(packed)
unpacked, plens = rnn_utils.pad_packed_sequence(pout, batch_first=True, padding_value=-1.0)
show("packed LSTM output, padded with -1", unpacked)
print("// lengths", plens.tolist())
show("packed LSTM h_n", ph)
pgru = nn.GRU(3, 2)
fill_params(pgru)
gout, gh = pgru(packed, pattern((1, 3, 2), 148))
show("packed GRU h_n (h0 given)", gh)
