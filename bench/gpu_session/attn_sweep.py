"""Fused SDPA kernels vs the math path (matmul, softmax, matmul with autograd) vs torch, by size."""
import sys
sys.path.insert(0, "bench")  # run from the repository root
import loom, torch
from cuda_bench import median_time as timed

for dt in ("float32", "float16"):
    for (B, H, L, E) in [(32, 8, 64, 32), (32, 8, 128, 32), (32, 8, 128, 64), (8, 8, 256, 32), (16, 8, 256, 64),
                         (8, 8, 512, 64), (4, 8, 1024, 64), (2, 8, 2048, 64), (1, 8, 4096, 64), (4, 8, 1024, 128)]:
        ld, td = getattr(loom, dt), getattr(torch, dt)
        lq, lk, lv = (loom.randn(B, H, L, E, device="cuda").to(ld).requires_grad_() for _ in range(3))
        tq, tk, tv = (torch.randn(B, H, L, E, device="cuda", dtype=td, requires_grad=True) for _ in range(3))
        s = E ** -0.5
        lF, tF = loom.nn.functional, torch.nn.functional
        res = {}
        for name, fn, sync in [
            ("fused", lambda: lF.scaled_dot_product_attention(lq, lk, lv).sum().backward(), loom.cuda.synchronize),
            ("math", lambda: (((lq @ lk.transpose(-2, -1)) * s).softmax(-1) @ lv).sum().backward(), loom.cuda.synchronize),
            ("torch", lambda: tF.scaled_dot_product_attention(tq, tk, tv).sum().backward(), torch.cuda.synchronize)]:
            try:
                res[name] = timed(fn, sync)
            except Exception as e:
                res[name] = float("nan"); print(name, "failed:", e)
        f = {}
        with loom.no_grad():
            f["fused"] = timed(lambda: lF.scaled_dot_product_attention(lq, lk, lv), loom.cuda.synchronize)
            f["math"] = timed(lambda: ((lq @ lk.transpose(-2, -1)) * s).softmax(-1) @ lv, loom.cuda.synchronize)
        print(f"{dt} B{B} H{H} L{L} E{E}: fwd+bwd fused {res['fused']*1e3:.3f} math {res['math']*1e3:.3f} "
              f"torch {res['torch']*1e3:.3f} ms | fwd fused {f['fused']*1e3:.3f} math {f['math']*1e3:.3f}")
        del lq, lk, lv, tq, tk, tv
