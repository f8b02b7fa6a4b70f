"""loom.amp: mixed precision, as torch.amp — autocast and GradScaler.

    scaler = loom.amp.GradScaler("cuda")
    with loom.autocast("cuda", dtype=loom.float16):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()

autocast's per-op casting is in the core's dispatcher (loom/autocast.h), so it applies to every
device type, a plugin's included.
"""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401
