"""loom.backends: device-type settings under torch.backends' names."""
from . import cuda  # noqa: F401
