"""loom.backends.cuda: settings of the CUDA plugin, as in torch.backends.cuda.

    loom.backends.cuda.matmul.allow_tf32 = True   # float32 matmuls may use TF32
    loom.backends.cuda.set_attention_kernels("always")  # or "auto" (default), "never"

Setting it hands the value to the CUDA plugin (the device option
"allow_tf32"), loading the plugin first when there is one; without a CUDA
plugin or GPU the value is only kept, as on a CPU-only PyTorch. The default
is False, as in PyTorch >= 1.12.
"""
from .. import _C


class _MatmulSettings:
    def __init__(self):
        self._allow_tf32 = False

    @property
    def allow_tf32(self):
        return self._allow_tf32

    @allow_tf32.setter
    def allow_tf32(self, value):
        value = bool(value)
        # Loads the plugin when there is one; a plugin that has no such
        # option raises, naming it.
        if _C._available_device_count("cuda") > 0:
            _C.set_device_option("cuda", "allow_tf32", "1" if value else "0")
        self._allow_tf32 = value

    def __repr__(self):
        return f"<loom.backends.cuda.matmul allow_tf32={self._allow_tf32}>"


matmul = _MatmulSettings()


def set_attention_kernels(mode):
    """When scaled_dot_product_attention runs the CUDA plugin's fused kernels: "auto" (the
    default: only where the decomposed path's L x S scores would take more than 1/16 of the
    GPU's memory, since it is faster wherever they fit), "always" or "never" (the device
    option "attention_kernels")."""
    if mode not in ("auto", "always", "never"):
        raise ValueError(f"set_attention_kernels: mode must be 'auto', 'always' or 'never', got {mode!r}")
    if _C._available_device_count("cuda") > 0:
        _C.set_device_option("cuda", "attention_kernels", mode)
