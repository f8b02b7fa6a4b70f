"""A character-level GPT: train, checkpoint, then sample, in the manner of nanoGPT / minGPT.

Reads a text file (--data), encodes it by character, trains a decoder-only transformer (causal
self-attention, LayerNorm, GELU MLP, tied token embedding and head) with AdamW over two parameter
groups (weight decay on matrices only), warmup + cosine learning rate, gradient accumulation and
gradient clipping; saves a checkpoint, reloads it and samples with temperature and top-k.
Batch offsets come from a numpy generator seeded by --seed, as nanoGPT draws them from its data,
or with --loader torch from minGPT's DataLoader over a Dataset of chunks with an endless
RandomSampler.
"""
import argparse
import inspect
import json
import math
import os
import time
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias (PyTorch's nn.LayerNorm has no bias=False)."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):

    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        # key, query, value projections for all heads, but in a batch
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.dropout = config.dropout
        # flash attention make GPU go brrrrr but support is only in PyTorch >= 2.0
        self.flash = hasattr(torch.nn.functional, 'scaled_dot_product_attention')
        if not self.flash:
            print("WARNING: using slow attention. Flash Attention requires PyTorch >= 2.0")
            # causal mask to ensure that attention is only applied to the left in the input sequence
            self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                                 .view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size()  # batch size, sequence length, embedding dimensionality (n_embd)

        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)

        # causal self-attention; Self-attend: (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
        if self.flash:
            # efficient attention using Flash Attention CUDA kernels
            y = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0, is_causal=True)
        else:
            # manual implementation of attention
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-assemble all head outputs side by side

        y = self.resid_dropout(self.c_proj(y))
        return y


class MLP(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        x = self.c_fc(x)
        x = self.gelu(x)
        x = self.c_proj(x)
        x = self.dropout(x)
        return x


class Block(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True


class GPT(nn.Module):

    def __init__(self, config):
        super().__init__()
        assert config.vocab_size is not None
        assert config.block_size is not None
        self.config = config

        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        # weight tying: the token embedding and the output head share one matrix
        self.transformer.wte.weight = self.lm_head.weight

        self.apply(self._init_weights)
        # apply special scaled init to the residual projections, per GPT-2 paper
        for pn, p in self.named_parameters():
            if pn.endswith('c_proj.weight'):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

        print("number of parameters: %.2fM" % (self.get_num_params() / 1e6,))

    def get_num_params(self, non_embedding=True):
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n_params -= self.transformer.wpe.weight.numel()
        return n_params

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.config.block_size, \
            f"Cannot forward sequence of length {t}, block size is only {self.config.block_size}"
        pos = torch.arange(0, t, dtype=torch.long, device=device)  # shape (t)

        tok_emb = self.transformer.wte(idx)  # token embeddings of shape (b, t, n_embd)
        pos_emb = self.transformer.wpe(pos)  # position embeddings of shape (t, n_embd)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)

        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            # inference-time mini-optimization: only forward the lm_head on the very last position
            logits = self.lm_head(x[:, [-1], :])  # note: using list [-1] to preserve the time dim
            loss = None
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters()}
        param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
        # 2D parameters (matmul weights and embeddings) decay; biases and layernorms don't.
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [
            {'params': decay_params, 'weight_decay': weight_decay},
            {'params': nodecay_params, 'weight_decay': 0.0}
        ]
        num_decay_params = sum(p.numel() for p in decay_params)
        num_nodecay_params = sum(p.numel() for p in nodecay_params)
        print(f"num decayed parameter tensors: {len(decay_params)}, with {num_decay_params:,} parameters")
        print(f"num non-decayed parameter tensors: {len(nodecay_params)}, with {num_nodecay_params:,} parameters")
        fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == 'cuda'
        extra_args = dict(fused=True) if use_fused else dict()
        optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
        print(f"using fused AdamW: {use_fused}")
        return optimizer

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            # crop the context to the last block_size tokens
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float('Inf')
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


def parse_args(argv=None):
    p = argparse.ArgumentParser(description='train a small character-level GPT, then sample from it')
    p.add_argument('--data', default='input.txt')
    p.add_argument('--out-dir', default='out')
    p.add_argument('--init-from', default='scratch', choices=['scratch', 'resume'])
    p.add_argument('--always-save-checkpoint', action='store_true')
    p.add_argument('--block-size', type=int, default=32)
    p.add_argument('--n-layer', type=int, default=2)
    p.add_argument('--n-head', type=int, default=4)
    p.add_argument('--n-embd', type=int, default=64)
    p.add_argument('--dropout', type=float, default=0.1)
    p.add_argument('--no-bias', dest='bias', action='store_false')
    p.add_argument('--batch-size', type=int, default=12)
    p.add_argument('--loader', default='numpy', choices=['numpy', 'torch'],
                   help="batches drawn with numpy (nanoGPT) or by a DataLoader (minGPT)")
    p.add_argument('--num-workers', type=int, default=0)
    p.add_argument('--gradient-accumulation-steps', type=int, default=2)
    p.add_argument('--max-iters', type=int, default=200)
    p.add_argument('--eval-interval', type=int, default=50)
    p.add_argument('--eval-iters', type=int, default=10)
    p.add_argument('--log-interval', type=int, default=10)
    p.add_argument('--lr', '--learning-rate', dest='learning_rate', type=float, default=1e-3)
    p.add_argument('--weight-decay', type=float, default=1e-1)
    p.add_argument('--beta1', type=float, default=0.9)
    p.add_argument('--beta2', type=float, default=0.99)
    p.add_argument('--grad-clip', type=float, default=1.0)
    p.add_argument('--warmup-iters', type=int, default=10)
    p.add_argument('--lr-decay-iters', type=int, default=200)
    p.add_argument('--min-lr', type=float, default=1e-4)
    p.add_argument('--num-samples', type=int, default=2)
    p.add_argument('--max-new-tokens', type=int, default=100)
    p.add_argument('--temperature', type=float, default=0.8)
    p.add_argument('--top-k', type=int, default=20)
    p.add_argument('--start', default='\n')
    p.add_argument('--device', default='cpu')
    p.add_argument('--seed', type=int, default=1337)
    p.add_argument('--init-weights', default=None, help='a state_dict to start from')
    p.add_argument('--log', default=None, help='write the losses and samples to this JSON file')
    return p.parse_args(argv)


class CharDataset(Dataset):
    """Chunks of block_size + 1 encoded characters, as minGPT's chargpt: x is the chunk but its last
    character, y the chunk but its first."""

    def __init__(self, data, block_size):
        self.data = data
        self.block_size = block_size

    def __len__(self):
        return len(self.data) - self.block_size

    def __getitem__(self, idx):
        dix = self.data[idx:idx + self.block_size + 1].tolist()
        x = torch.tensor(dix[:-1], dtype=torch.long)
        y = torch.tensor(dix[1:], dtype=torch.long)
        return x, y


def load_weights(model, state_dict):
    """load_state_dict, except for the causal mask: a buffer only on the slow-attention path, so a
    checkpoint from a PyTorch with the other path has it or lacks it (from_pretrained drops it too)."""
    own = model.state_dict()
    state_dict = {k: v for k, v in state_dict.items() if not k.endswith('.attn.bias') or k in own}
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    assert not unexpected and all(k.endswith('.attn.bias') for k in missing), (missing, unexpected)


def read_vocab(path):
    with open(path, 'r') as f:
        text = f.read()
    chars = sorted(list(set(text)))
    return text, chars


def build_model(args):
    _, chars = read_vocab(args.data)
    model_args = dict(n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd, block_size=args.block_size,
                      bias=args.bias, vocab_size=len(chars), dropout=args.dropout)
    return GPT(GPTConfig(**model_args))


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    torch.manual_seed(args.seed)
    torch.backends.cuda.matmul.allow_tf32 = True  # allow tf32 on matmul
    torch.backends.cudnn.allow_tf32 = True  # allow tf32 on cudnn
    device = args.device
    dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else 'float16'
    device_type = 'cuda' if 'cuda' in device else 'cpu'  # for later use in torch.autocast
    # note: float16 data type will automatically use a GradScaler
    ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
    ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)

    # the data: characters to integers, 90% train, 10% val
    text, chars = read_vocab(args.data)
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    encode = lambda s: [stoi[c] for c in s]  # noqa: E731
    decode = lambda l: ''.join([itos[i] for i in l])  # noqa: E731
    ids = np.array(encode(text), dtype=np.uint16)
    n = int(0.9 * len(ids))
    train_data, val_data = ids[:n], ids[n:]
    rng = np.random.RandomState(args.seed)

    # minGPT's way (--loader torch): a Dataset of chunks and an endless random sampler
    loaders = {}
    if args.loader == 'torch':
        for split, data in (('train', train_data), ('val', val_data)):
            sampler = torch.utils.data.RandomSampler(CharDataset(data, args.block_size), replacement=True,
                                                     num_samples=int(1e10))
            loader = DataLoader(CharDataset(data, args.block_size), sampler=sampler, shuffle=False,
                                pin_memory=True, batch_size=args.batch_size, num_workers=args.num_workers)
            loaders[split] = [loader, iter(loader)]

    def get_batch(split):
        if args.loader == 'torch':
            # fetch the next batch (x, y) and re-init iterator if needed
            try:
                batch = next(loaders[split][1])
            except StopIteration:
                loaders[split][1] = iter(loaders[split][0])
                batch = next(loaders[split][1])
            x, y = [t.to(device) for t in batch]
            return x, y
        data = train_data if split == 'train' else val_data
        ix = rng.randint(len(data) - args.block_size, size=(args.batch_size,))
        x = torch.stack([torch.from_numpy((data[i:i + args.block_size]).astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + args.block_size]).astype(np.int64)) for i in ix])
        if device_type == 'cuda':
            # pin arrays x,y, which allows us to move them to GPU asynchronously (non_blocking=True)
            x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
        else:
            x, y = x.to(device), y.to(device)
        return x, y

    model_args = dict(n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd, block_size=args.block_size,
                      bias=args.bias, vocab_size=len(chars), dropout=args.dropout)
    iter_num = 0
    best_val_loss = 1e9
    checkpoint = None
    if args.init_from == 'scratch':
        print("Initializing a new model from scratch")
        model = GPT(GPTConfig(**model_args))
        if args.init_weights:
            load_weights(model, torch.load(args.init_weights, map_location=device))
    elif args.init_from == 'resume':
        print(f"Resuming training from {args.out_dir}")
        # resume training from a checkpoint.
        ckpt_path = os.path.join(args.out_dir, 'ckpt.pt')
        checkpoint = torch.load(ckpt_path, map_location=device)
        checkpoint_model_args = checkpoint['model_args']
        # force these config attributes to be equal otherwise we can't even resume training
        # the rest of the attributes (e.g. dropout) can stay as desired from command line
        for k in ['n_layer', 'n_head', 'n_embd', 'block_size', 'bias', 'vocab_size']:
            model_args[k] = checkpoint_model_args[k]
        model = GPT(GPTConfig(**model_args))
        state_dict = checkpoint['model']
        # fix the keys of the state dictionary :(
        # honestly no idea how checkpoints sometimes get this prefix, have to debug more
        unwanted_prefix = '_orig_mod.'
        for k, v in list(state_dict.items()):
            if k.startswith(unwanted_prefix):
                state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
        load_weights(model, state_dict)
        iter_num = checkpoint['iter_num']
        best_val_loss = checkpoint['best_val_loss']
    model.to(device)

    # initialize a GradScaler. If enabled=False scaler is a no-op (without CUDA it disables itself)
    scaler = torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))
    optimizer = model.configure_optimizers(args.weight_decay, args.learning_rate, (args.beta1, args.beta2), device_type)
    if args.init_from == 'resume':
        optimizer.load_state_dict(checkpoint['optimizer'])
    checkpoint = None  # free up memory
    if hasattr(torch, 'compile') and device_type == 'cuda':
        model = torch.compile(model)

    @torch.no_grad()
    def estimate_loss():
        out = {}
        model.eval()
        for split in ['train', 'val']:
            losses = torch.zeros(args.eval_iters)
            for k in range(args.eval_iters):
                X, Y = get_batch(split)
                with ctx:
                    logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean()
        model.train()
        return out

    # learning rate decay scheduler (cosine with warmup)
    def get_lr(it):
        if it < args.warmup_iters:
            return args.learning_rate * (it + 1) / (args.warmup_iters + 1)
        if it > args.lr_decay_iters:
            return args.min_lr
        decay_ratio = (it - args.warmup_iters) / (args.lr_decay_iters - args.warmup_iters)
        assert 0 <= decay_ratio <= 1
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))  # coeff ranges 0..1
        return args.min_lr + coeff * (args.learning_rate - args.min_lr)

    log = {'train_loss': [], 'val_loss': [], 'eval_train_loss': [], 'lr': []}
    X, Y = get_batch('train')
    t0 = time.time()
    while True:
        lr = get_lr(iter_num)
        for param_group in optimizer.param_groups:
            param_group['lr'] = lr

        if iter_num % args.eval_interval == 0:
            losses = estimate_loss()
            print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
            log['eval_train_loss'].append(losses['train'].item())
            log['val_loss'].append(losses['val'].item())
            if losses['val'] < best_val_loss or args.always_save_checkpoint:
                best_val_loss = losses['val']
                if iter_num > 0:
                    checkpoint = {
                        'model': model.state_dict(),
                        'optimizer': optimizer.state_dict(),
                        'model_args': model_args,
                        'iter_num': iter_num,
                        'best_val_loss': best_val_loss,
                        'config': vars(args),
                    }
                    print(f"saving checkpoint to {args.out_dir}")
                    torch.save(checkpoint, os.path.join(args.out_dir, 'ckpt.pt'))

        for micro_step in range(args.gradient_accumulation_steps):
            with ctx:
                logits, loss = model(X, Y)
                loss = loss / args.gradient_accumulation_steps  # scale the loss to account for accumulation
            X, Y = get_batch('train')  # prefetch the next batch while the model works
            scaler.scale(loss).backward()
        if args.grad_clip != 0.0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)

        t1 = time.time()
        dt = t1 - t0
        t0 = t1
        lossf = loss.item() * args.gradient_accumulation_steps
        log['train_loss'].append(lossf)
        log['lr'].append(lr)
        if iter_num % args.log_interval == 0:
            print(f"iter {iter_num}: loss {lossf:.4f}, time {dt * 1000:.2f}ms")
        iter_num += 1
        if iter_num > args.max_iters:
            break

    # sample from the best checkpoint, as sample.py does
    checkpoint = torch.load(os.path.join(args.out_dir, 'ckpt.pt'), map_location=device)
    gptconf = GPTConfig(**checkpoint['model_args'])
    model = GPT(gptconf)
    state_dict = checkpoint['model']
    unwanted_prefix = '_orig_mod.'
    for k, v in list(state_dict.items()):
        if k.startswith(unwanted_prefix):
            state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
    load_weights(model, state_dict)
    model.eval()
    model.to(device)
    start_ids = encode(args.start)
    x = (torch.tensor(start_ids, dtype=torch.long, device=device)[None, ...])
    log['samples'] = []
    with torch.no_grad():
        with ctx:
            for k in range(args.num_samples):
                y = model.generate(x, args.max_new_tokens, temperature=args.temperature, top_k=args.top_k)
                log['samples'].append(decode(y[0].tolist()))
                print(log['samples'][-1])
                print('---------------')
    if args.log:
        with open(args.log, 'w') as f:
            json.dump(log, f)


if __name__ == '__main__':
    main()
