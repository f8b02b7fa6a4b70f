"""A GPT, nanoGPT-shaped: token and position embeddings, pre-norm blocks of
causal self-attention and a GELU MLP, a final LayerNorm and a tied LM head,
trained with AdamW on next-token cross-entropy.

The model code is written once against the PyTorch API and built with
whichever library is passed in as `torch` (loom or PyTorch).
"""

NAME = "gpt"

# Sizes: the GPU one is issue 22's (6 layers, 12 heads, 768 wide, batch 8 x
# 512 tokens, vocab 8192); the CPU one keeps the layers and shrinks the batch.
CONFIGS = {
    "cpu": dict(n_layer=6, n_head=12, n_embd=768, vocab=8192, block=128, batch=2, lr=3e-4),
    "cuda": dict(n_layer=6, n_head=12, n_embd=768, vocab=8192, block=512, batch=8, lr=3e-4),
    "small": dict(n_layer=2, n_head=4, n_embd=128, vocab=1024, block=64, batch=4, lr=3e-4),
}
HAS_INFERENCE = True


def build(torch, cfg):
    nn = torch.nn
    F = torch.nn.functional
    # Where the library has the fused attention (loom; PyTorch >= 2.0), use
    # it, as nanoGPT does; otherwise the explicit softmax(QK^T)V with a mask.
    flash = hasattr(F, "scaled_dot_product_attention")

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.n_head, self.n_embd = cfg["n_head"], cfg["n_embd"]
            self.c_attn = nn.Linear(self.n_embd, 3 * self.n_embd)
            self.c_proj = nn.Linear(self.n_embd, self.n_embd)
            if not flash:
                mask = torch.tril(torch.ones(cfg["block"], cfg["block"]))
                self.register_buffer("bias", mask.view(1, 1, cfg["block"], cfg["block"]))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            if flash:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
                att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
                y = F.softmax(att, dim=-1) @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    def new_gelu(x):
        # nanoGPT's first model.py: GELU's tanh form as eight elementwise ops.
        return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * torch.pow(x, 3.0))))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(cfg["n_embd"], 4 * cfg["n_embd"])
            # cfg gelu="ops": nanoGPT's written-out GELU (what fusion is for).
            self.gelu = new_gelu if cfg.get("gelu") == "ops" else nn.GELU()
            self.c_proj = nn.Linear(4 * cfg["n_embd"], cfg["n_embd"])

        def forward(self, x):
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(cfg["n_embd"])
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(cfg["n_embd"])
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(cfg["vocab"], cfg["n_embd"])
            self.wpe = nn.Embedding(cfg["block"], cfg["n_embd"])
            self.h = nn.ModuleList([Block() for _ in range(cfg["n_layer"])])
            self.ln_f = nn.LayerNorm(cfg["n_embd"])
            self.lm_head = nn.Linear(cfg["n_embd"], cfg["vocab"], bias=False)
            self.wte.weight = self.lm_head.weight  # weight tying, as GPT-2

        def forward(self, idx):
            T = idx.size(1)
            pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
            x = self.wte(idx) + self.wpe(pos)
            for block in self.h:
                x = block(x)
            return self.lm_head(self.ln_f(x))

    return GPT()


def batch(torch, cfg, device, rng):
    """Token ids and their next tokens, drawn from `rng` (numpy)."""
    data = rng.integers(0, cfg["vocab"], (cfg["batch"], cfg["block"] + 1))
    idx = torch.tensor(data[:, :-1]).to(device)
    targets = torch.tensor(data[:, 1:]).to(device)
    return idx, targets


def loss(torch, model, inputs, targets):
    logits = model(inputs)
    return torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))


def optimizer(torch, model, cfg):
    return torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.1)
