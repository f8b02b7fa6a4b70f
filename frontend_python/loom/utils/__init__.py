"""loom.utils: data loading (loom.utils.data)."""
from . import data  # noqa: F401
