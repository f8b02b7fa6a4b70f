"""loom's CUDA plugin against PyTorch on the same GPU, side by side in one run
(issue 8's targets). Needs a GPU, loom built with the CUDA plugin, and torch
with CUDA:

    PYTHONPATH=build/python python3 bench/cuda_bench.py [--quick]

Prints, per case, loom's and PyTorch's time (median of repeats, each a batch
timed between device synchronisations, loom's and torch's batches
interleaved), the ratio torch / loom (> 1: loom faster)
and, for the bandwidth cases, GB/s against a device-to-device copy.
Without a GPU (or without torch's CUDA) it says why and exits 0.
"""
import statistics
import sys
import time

QUICK = "--quick" in sys.argv


def _batch(fn, sync, inner):
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    sync()
    return (time.perf_counter() - start) / inner


def median_time(fn, sync, inner=10, repeats=5):
    """Median seconds of one call of fn over `repeats` batches of `inner` calls (one library)."""
    fn()
    sync()
    return statistics.median(_batch(fn, sync, inner) for _ in range(repeats))


def paired(fl, lsync, ft, tsync, repeats=None, inner=None):
    """(loom, torch) median seconds per call, their batches interleaved (alternating which
    goes first) so that a shared machine's drift lands on both sides alike."""
    repeats = repeats or (5 if QUICK else 11)
    inner = inner or 1
    for fn, sync in ((fl, lsync), (ft, tsync)):
        fn()
        sync()
    tl, tt = [], []
    for r in range(repeats):
        order = ((fl, lsync, tl), (ft, tsync, tt))
        for fn, sync, out in (order if r % 2 == 0 else order[::-1]):
            out.append(_batch(fn, sync, inner))
    return statistics.median(tl), statistics.median(tt)


def row(name, t_loom, t_torch, extra=""):
    ratio = t_torch / t_loom if t_loom > 0 else float("nan")
    print(f"{name:44s} loom {t_loom * 1e3:10.3f} ms  torch {t_torch * 1e3:10.3f} ms  torch/loom {ratio:5.2f}x {extra}")


def main():
    try:
        import loom
    except ImportError as e:
        print(f"cuda_bench: loom is not importable ({e}); set PYTHONPATH=build/python")
        return 0
    if not loom.cuda.is_available():
        print("cuda_bench: loom sees no CUDA device:", loom.device_unavailable_reason("cuda")
              if hasattr(loom, "device_unavailable_reason") else "")
        return 0
    try:
        import torch
    except ImportError:
        print("cuda_bench: torch is not installed; nothing to compare with")
        return 0
    if not torch.cuda.is_available():
        print("cuda_bench: torch has no CUDA here")
        return 0
    print("device:", loom.cuda.get_device_name(0), "| torch", torch.__version__)
    failed = 0
    for section in (_matmul, _bandwidth, _overhead, _conv, _host_to_device, _attention, _training):
        # One failing case must not hide the others' figures: report it and go on.
        try:
            section(loom, torch)
        except Exception as e:  # noqa: BLE001 - any failure is reported, then the run goes on
            failed += 1
            print(f"{section.__name__[1:]:44s} FAILED: {type(e).__name__}: {e}")
    return 1 if failed else 0


def _matmul(loom, torch):
    lsync, tsync = loom.cuda.synchronize, torch.cuda.synchronize

    # matmul: TF32 off and on, fp16, bf16; TFLOP/s.
    for n in ([4096] if QUICK else [4096, 8192]):
        for label, ldt, tdt, tf32 in [("fp32", loom.float32, torch.float32, False),
                                      ("fp32 tf32", loom.float32, torch.float32, True),
                                      ("fp16", loom.float16, torch.float16, False),
                                      ("bf16", loom.bfloat16, torch.bfloat16, False)]:
            loom.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cuda.matmul.allow_tf32 = tf32
            a = loom.randn(n, n, device="cuda").to(ldt)
            b = loom.randn(n, n, device="cuda").to(ldt)
            ta = torch.randn(n, n, device="cuda", dtype=tdt)
            tb = torch.randn(n, n, device="cuda", dtype=tdt)
            tl, tt = paired(lambda: a @ b, lsync, lambda: ta @ tb, tsync)
            flops = 2 * n ** 3
            row(f"matmul {label} {n}^3", tl, tt, f"({flops / tl / 1e12:.1f} vs {flops / tt / 1e12:.1f} TFLOP/s)")
    loom.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False


def _bandwidth(loom, torch):
    lsync, tsync = loom.cuda.synchronize, torch.cuda.synchronize
    # Bandwidth: add and sum over 256M float32, against a device-to-device copy.
    n = (1 << 24) if QUICK else (1 << 28)
    x = loom.randn(n, device="cuda")
    y = loom.randn(n, device="cuda")
    tx = torch.randn(n, device="cuda")
    ty = torch.randn(n, device="cuda")
    copy_l, copy_t = paired(lambda: x.clone(), lsync, lambda: tx.clone(), tsync)
    gb = 4 * n / 1e9
    row(f"copy (clone) {n} fp32", copy_l, copy_t, f"({2 * gb / copy_l:.0f} vs {2 * gb / copy_t:.0f} GB/s)")
    tl, tt = paired(lambda: x + y, lsync, lambda: tx + ty, tsync)
    row(f"add {n} fp32", tl, tt, f"({3 * gb / tl:.0f} GB/s = {(3 * gb / tl) / (2 * gb / copy_l):.2f} of copy)")
    tl, tt = paired(lambda: x.sum(), lsync, lambda: tx.sum(), tsync)
    row(f"sum {n} fp32", tl, tt, f"({gb / tl:.0f} GB/s = {(gb / tl) / (2 * gb / copy_l):.2f} of copy)")
    del x, y, tx, ty


def _overhead(loom, torch):
    lsync, tsync = loom.cuda.synchronize, torch.cuda.synchronize
    # Per-op launch overhead, 1-element tensors.
    a1, b1 = loom.ones(1, device="cuda"), loom.ones(1, device="cuda")
    ta1, tb1 = torch.ones(1, device="cuda"), torch.ones(1, device="cuda")
    tl, tt = paired(lambda: a1 + b1, lsync, lambda: ta1 + tb1, tsync, inner=2000)
    row("add, 1 element (per op)", tl, tt)


def _conv(loom, torch):
    lsync, tsync = loom.cuda.synchronize, torch.cuda.synchronize
    # conv2d forward + backward, batch 64, 64->64, 56x56, 3x3.
    xs = loom.randn(64, 64, 56, 56, device="cuda").requires_grad_()
    ws = loom.randn(64, 64, 3, 3, device="cuda").requires_grad_()
    txs = torch.randn(64, 64, 56, 56, device="cuda", requires_grad=True)
    tws = torch.randn(64, 64, 3, 3, device="cuda", requires_grad=True)
    # torch lets cuDNN use TF32 for float32 convolutions by default
    # (torch.backends.cudnn.allow_tf32); loom only when asked. Both ways, matched.
    for tf32 in (False, True):
        loom.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        tl, tt = paired(lambda: loom.nn.functional.conv2d(xs, ws, padding=1).sum().backward(), lsync,
                        lambda: torch.nn.functional.conv2d(txs, tws, padding=1).sum().backward(), tsync)
        row(f"conv2d fwd+bwd 64x64x56x56 3x3{' tf32' if tf32 else ''}", tl, tt)
    loom.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = True
    del xs, ws, txs, tws


def _host_to_device(loom, torch):
    lsync, tsync = loom.cuda.synchronize, torch.cuda.synchronize
    # Host -> device copies of 64 MiB: pageable, and pinned + non_blocking.
    nbytes = 1 << 26
    hl = loom.empty(nbytes // 4)
    ht = torch.empty(nbytes // 4)
    tl, tt = paired(lambda: hl.to("cuda"), lsync, lambda: ht.to("cuda"), tsync)
    row("H2D 64 MiB pageable", tl, tt, f"({nbytes / tl / 1e9:.1f} vs {nbytes / tt / 1e9:.1f} GB/s)")
    pl, pt = hl.pin_memory(), ht.pin_memory()
    tl, tt = paired(lambda: pl.to("cuda", non_blocking=True), lsync,
                    lambda: pt.to("cuda", non_blocking=True), tsync)
    row("H2D 64 MiB pinned non_blocking", tl, tt, f"({nbytes / tl / 1e9:.1f} vs {nbytes / tt / 1e9:.1f} GB/s)")


def _attention(loom, torch):
    lsync, tsync = loom.cuda.synchronize, torch.cuda.synchronize
    # The encoder step's attention alone: batch 32, 8 heads, 128 tokens, head dim 32, float32.
    shape = (32, 8, 128, 32)
    lq, lk, lv = (loom.randn(*shape, device="cuda").requires_grad_() for _ in range(3))
    tq, tk, tv = (torch.randn(*shape, device="cuda", requires_grad=True) for _ in range(3))
    tl, tt = paired(lambda: loom.nn.functional.scaled_dot_product_attention(lq, lk, lv).sum().backward(), lsync,
                    lambda: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv).sum().backward(), tsync,
                    inner=10)
    row("sdpa fwd+bwd 32x8x128x32 fp32", tl, tt)


def _training(loom, torch):
    lsync, tsync = loom.cuda.synchronize, torch.cuda.synchronize
    # Training steps: the same code on both libraries (they share the API).
    for name, make in [("digits CNN step (b32, SGD momentum)", _cnn_step),
                       ("transformer encoder step (4x256, b32x128, AdamW)", _encoder_step)]:
        fl, ft = make(loom), make(torch)
        tl, tt = paired(fl, lsync, ft, tsync, inner=20)
        row(name, tl, tt)


def _cnn_step(lib):
    """samples/train_cnn's model and step on random 8x8 digits-shaped data."""
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 4 * 4, 10)).to("cuda")
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = lib.randn(32, 1, 8, 8, device="cuda")
    y = lib.randint(0, 10, (32,), device="cuda")
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    return step


def encoder(lib):
    """A small transformer encoder (4 layers, d=256, 8 heads, ff 1024) with a classifier head
    on batch 32 x 128 tokens: (model, head, AdamW, x, y, loss_fn)."""
    nn = lib.nn
    lib.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024, dropout=0.0, batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=4).to("cuda")
    head = nn.Linear(256, 10).to("cuda")
    params = list(model.parameters()) + list(head.parameters())
    opt = lib.optim.AdamW(params, lr=1e-4)
    x = lib.randn(32, 128, 256, device="cuda")
    y = lib.randint(0, 10, (32,), device="cuda")
    return model, head, opt, x, y, nn.CrossEntropyLoss()


def _encoder_step(lib):
    model, head, opt, x, y, loss_fn = encoder(lib)

    def step():
        opt.zero_grad()
        loss_fn(head(model(x).mean(1)), y).backward()
        opt.step()
    return step


if __name__ == "__main__":
    sys.exit(main())
