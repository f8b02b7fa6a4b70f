"""loom.backends: device-type settings under torch.backends' names."""
from . import cuda, cudnn, mps  # noqa: F401
