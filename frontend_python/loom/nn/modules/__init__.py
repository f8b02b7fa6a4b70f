"""The layers of loom.nn, by family (one file each, as in PyTorch)."""
from .activation import (  # noqa: F401
    ELU, GELU, Hardtanh, LeakyReLU, LogSoftmax, MultiheadAttention, ReLU, ReLU6, SiLU, Sigmoid, Softmax, Softplus, Tanh)
from .batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401
from .container import ModuleDict, ModuleList, Sequential  # noqa: F401
from .conv import Conv1d, Conv2d, ConvTranspose2d  # noqa: F401
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401
from .linear import Bilinear, Identity, Linear  # noqa: F401
from .loss import (  # noqa: F401
    BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss)
from .normalization import GroupNorm, LayerNorm, RMSNorm  # noqa: F401
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d  # noqa: F401
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase  # noqa: F401
from .sparse import Embedding  # noqa: F401
from .transformer import (  # noqa: F401
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer)

__all__ = sorted(n for n, v in dict(globals()).items() if isinstance(v, type) and not n.startswith("_"))
