"""Where the transformer encoder step's time goes, loom vs torch (diagnostic)."""
import sys
sys.path.insert(0, "bench")  # run from the repository root
import loom, torch
from cuda_bench import encoder, median_time

def parts(lib):
    nn = lib.nn
    model, head, opt, x, y, loss_fn = encoder(lib)
    def fwd():
        with lib.no_grad():
            loss_fn(head(model(x).mean(1)), y)
    def fwd_bwd():
        opt.zero_grad()
        loss_fn(head(model(x).mean(1)), y).backward()
    fwd_bwd()
    def step():
        opt.step()
    lin = nn.Linear(256, 768).to("cuda"); xl = lib.randn(4096, 256, device="cuda")
    def linear():
        with lib.no_grad(): lin(xl)
    ln = nn.LayerNorm(256).to("cuda")
    def layernorm():
        with lib.no_grad(): ln(xl)
    shape = (32, 8, 128, 32)
    q, k, v = (lib.randn(*shape, device="cuda").requires_grad_() for _ in range(3))
    F = nn.functional
    def sdpa_fwd():
        with lib.no_grad(): F.scaled_dot_product_attention(q, k, v)
    def sdpa_fwd_bwd():
        F.scaled_dot_product_attention(q, k, v).sum().backward()
    def math_fwd_bwd():
        (((q @ k.transpose(-2, -1)) * (32 ** -0.5)).softmax(-1) @ v).sum().backward()
    def math_fwd():
        with lib.no_grad(): ((q @ k.transpose(-2, -1)) * (32 ** -0.5)).softmax(-1) @ v
    return dict(forward=fwd, fwd_bwd=fwd_bwd, adamw_step=step, linear_4096x256x768=linear,
                layer_norm_4096x256=layernorm, sdpa_fwd=sdpa_fwd, sdpa_fwd_bwd=sdpa_fwd_bwd,
                math_attn_fwd=math_fwd, math_attn_fwd_bwd=math_fwd_bwd)

lp, tp = parts(loom), parts(torch)
for k in lp:
    tl = median_time(lp[k], loom.cuda.synchronize, 20); tt = median_time(tp[k], torch.cuda.synchronize, 20)
    print(f"{k:28s} loom {tl*1e3:8.3f} ms  torch {tt*1e3:8.3f} ms  torch/loom {tt/tl:5.2f}x")
