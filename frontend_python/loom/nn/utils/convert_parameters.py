"""parameters_to_vector and vector_to_parameters, as torch.nn.utils."""
import loom as _loom


def parameters_to_vector(parameters):
    """Every parameter flattened and concatenated into one 1-D tensor (on the first one's device)."""
    params = list(parameters)
    if not params:
        raise RuntimeError("parameters_to_vector: expected at least one parameter")
    device = params[0].device
    for p in params:
        if p.device != device:
            raise TypeError(f"Found two parameters on different devices, this is currently not supported: "
                            f"{device} and {p.device}")
    return _loom.cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec, parameters):
    """Copies slices of the 1-D `vec` into the parameters' data, in order."""
    if not isinstance(vec, _loom.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if vec.dim() != 1 or vec.numel() != total:
        raise RuntimeError(f"vector_to_parameters: expected a 1-D vector of {total} elements (the parameters' "
                           f"count), got shape {tuple(vec.shape)}")
    offset = 0
    for p in params:
        n = p.numel()
        p.data = vec[offset:offset + n].view(tuple(p.shape)).data
        offset += n
