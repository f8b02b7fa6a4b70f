"""loom.nn: modules, parameters, functional ops and initialisers with PyTorch's API.

    import loom.nn as nn
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    loss = nn.CrossEntropyLoss()(model(x), y)
"""
from .parameter import Parameter  # noqa: F401
from .module import Module  # noqa: F401
from . import modules  # noqa: F401
from .modules import *  # noqa: F401,F403
from . import functional  # noqa: F401
from . import init  # noqa: F401
from . import utils  # noqa: F401
from . import parallel  # noqa: F401
from .parallel import DataParallel  # noqa: F401

__all__ = ["Parameter", "Module", "functional", "init", "utils", "parallel", "DataParallel"] + modules.__all__
