"""An LSTM language model (the shape of PyTorch's word_language_model
example: embedding, a 2-layer LSTM, a linear decoder over the vocabulary),
trained with SGD and gradient clipping on next-token cross-entropy.

The model code is written once against the PyTorch API and built with
whichever library is passed in as `torch` (loom or PyTorch). No dropout,
so both libraries' first losses can be compared.
"""

NAME = "lstm"

CONFIGS = {
    "cpu": dict(vocab=10000, emb=256, hidden=256, layers=2, seq=35, batch=20, lr=20.0),
    "cuda": dict(vocab=33278, emb=650, hidden=650, layers=2, seq=35, batch=64, lr=20.0),
    "small": dict(vocab=100, emb=16, hidden=16, layers=1, seq=8, batch=4, lr=1.0),
}
HAS_INFERENCE = True


def build(torch, cfg):
    nn = torch.nn

    class LanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(cfg["vocab"], cfg["emb"])
            self.rnn = nn.LSTM(cfg["emb"], cfg["hidden"], cfg["layers"])  # (seq, batch, feature)
            self.decoder = nn.Linear(cfg["hidden"], cfg["vocab"])

        def forward(self, tokens):
            out, _ = self.rnn(self.encoder(tokens))
            return self.decoder(out)

    return LanguageModel()


def batch(torch, cfg, device, rng):
    tokens = rng.integers(0, cfg["vocab"], (cfg["seq"] + 1, cfg["batch"]))
    return torch.tensor(tokens[:-1]).to(device), torch.tensor(tokens[1:]).to(device)


def loss(torch, model, inputs, targets):
    logits = model(inputs)
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


class _ClippedSGD:
    """SGD with the example's gradient-norm clipping (0.25) before each step."""

    def __init__(self, torch, model, lr):
        self.torch, self.params = torch, list(model.parameters())
        self.opt = torch.optim.SGD(self.params, lr=lr)

    def zero_grad(self, set_to_none=True):
        self.opt.zero_grad(set_to_none=set_to_none)

    def step(self):
        self.torch.nn.utils.clip_grad_norm_(self.params, 0.25)
        self.opt.step()


def optimizer(torch, model, cfg):
    return _ClippedSGD(torch, model, cfg["lr"])
