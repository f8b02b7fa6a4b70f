"""loom.utils.data: datasets, samplers and the DataLoader, as torch.utils.data."""
from .dataset import Dataset, IterableDataset, TensorDataset, Subset, ConcatDataset, random_split
from .sampler import Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler, BatchSampler, DistributedSampler
from .collate import default_collate, default_convert
from .dataloader import DataLoader

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "random_split", "Sampler", "DistributedSampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler", "default_collate",
           "default_convert", "DataLoader"]
