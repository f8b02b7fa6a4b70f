"""GradScaler: loss scaling for float16 training, as torch.amp.GradScaler.

scale(loss) multiplies by the scale; unscale_(opt) divides the gradients by it and notes whether
any is inf or NaN; step(opt) skips the optimizer step when one was; update() halves the scale after
such a step and doubles it after growth_interval clean ones.
"""
import enum
import warnings

from .. import _C
from .._grad_mode import no_grad


class _Stage(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


class GradScaler:
    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled and device != "cpu" and _C._available_device_count(device) == 0:
            warnings.warn(f"loom.amp.GradScaler is enabled, but no {device} device is available. Disabling.",
                          stacklevel=2)
            self._enabled = False
        if growth_factor <= 1.0:
            raise ValueError("The growth factor must be > 1.0.")
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError("The backoff factor must be < 1.0.")
        self._init_scale, self._growth_factor, self._backoff_factor = init_scale, growth_factor, backoff_factor
        self._growth_interval = int(growth_interval)
        self._scale = None           # a float32 tensor on the device, made on first scale()
        self._growth_tracker = 0     # consecutive steps without inf / NaN
        self._per_optimizer = {}     # id(optimizer) -> {"stage", "found_inf"}

    def is_enabled(self):
        return self._enabled

    def _lazy_scale(self, device):
        if self._scale is None:
            self._scale = _C.full([], self._init_scale, dtype=_C.float32, device=device)
        return self._scale

    def scale(self, outputs):
        """outputs (a tensor, or lists / tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, _C.Tensor):
            return outputs * self._lazy_scale(outputs.device).to(outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _Stage.READY, "found_inf": 0.0})

    def unscale_(self, optimizer):
        """Divides optimizer's gradients by the scale, in place, noting inf / NaN among them."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] is _Stage.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is _Stage.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        if self._scale is None:
            raise RuntimeError("unscale_() before scale(): nothing was scaled with this GradScaler")
        inv_scale = 1.0 / float(self._scale.item())
        found = None
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if g.dtype == _C.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    g.mul_(inv_scale)
                    bad = g.isfinite().logical_not().any()
                    found = bad if found is None else found.logical_or(bad.to(found.device))
        state["found_inf"] = float(found.item()) if found is not None else 0.0
        state["stage"] = _Stage.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(), unless unscaling found inf / NaN gradients; returns what step returned."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] is _Stage.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is _Stage.READY:
            self.unscale_(optimizer)
        result = None
        if not state["found_inf"]:
            result = optimizer.step(*args, **kwargs)
        state["stage"] = _Stage.STEPPED
        return result

    def update(self, new_scale=None):
        """Backs the scale off after a step with inf / NaN gradients, grows it after growth_interval
        clean ones (or sets new_scale)."""
        if not self._enabled or self._scale is None:
            return
        if new_scale is not None:
            value = float(new_scale.item()) if isinstance(new_scale, _C.Tensor) else float(new_scale)
            self._scale.fill_(value)
        else:
            states = list(self._per_optimizer.values())
            if not states:
                raise RuntimeError("No inf checks were recorded prior to update().")
            if any(s["found_inf"] for s in states):
                self._scale.mul_(self._backoff_factor)
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale.mul_(self._growth_factor)
                    self._growth_tracker = 0
        self._per_optimizer = {}

    def get_scale(self):
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = int(new_interval)

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(self._init_scale)
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._growth_tracker = int(state_dict["_growth_tracker"])
