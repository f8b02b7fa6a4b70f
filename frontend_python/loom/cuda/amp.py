"""loom.cuda.amp: torch.cuda.amp's spellings of loom.amp for the "cuda" device type."""
from .. import _C
from .. import amp as _amp


def autocast(enabled=True, dtype=None, cache_enabled=True):
    return _amp.autocast("cuda", dtype=dtype if dtype is not None else _C.float16, enabled=enabled,
                         cache_enabled=cache_enabled)


def GradScaler(init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
    return _amp.GradScaler("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    return _amp.custom_bwd(bwd, device_type="cuda")
