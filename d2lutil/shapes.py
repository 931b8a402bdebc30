"""Shape checks and argument validation shared by the attention code.

Every check raises a clear ``TypeError`` or ``ValueError`` that names the
argument and says what was expected, so a reader who passes the wrong thing
learns what to pass instead.
"""

import torch

__all__ = ["check_shape"]


def check_shape(tensor, shape):
    """Raise ``ValueError`` unless ``tensor.shape == shape``.

    Like ``d2l.check_shape``, it returns nothing, so it can end a notebook cell
    without printing. Unlike it, the message says what was expected.
    """
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"tensor must be a torch.Tensor, got {type(tensor).__name__}")
    expected = tuple(shape)
    if tuple(tensor.shape) != expected:
        raise ValueError(f"expected shape {expected}, got {tuple(tensor.shape)}")


def check_positive_int(name, value):
    """Check that ``value`` is an int >= 1 (a bool is not an int here)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a positive int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def check_seed(seed, name="seed"):
    """Check that a seed is an int (a bool is not an int here)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"{name} must be an int, got {type(seed).__name__}")


def require_3d(name, tensor):
    """Check that ``tensor`` is a 3-D tensor (batch_size, length, width)."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if tensor.dim() != 3:
        raise ValueError(
            f"{name} must be 3-D (batch_size, length, width), "
            f"got shape {tuple(tensor.shape)}"
        )


def check_qkv(queries, keys, values):
    """Validate the three attention inputs against each other."""
    for name, tensor in (("queries", queries), ("keys", keys), ("values", values)):
        require_3d(name, tensor)
    if keys.shape[1] != values.shape[1]:
        raise ValueError(
            "keys and values must have the same number of key-value pairs, got "
            f"keys of shape {tuple(keys.shape)} and values of shape {tuple(values.shape)}"
        )
    if not queries.shape[0] == keys.shape[0] == values.shape[0]:
        raise ValueError(
            "queries, keys and values must have the same batch size, got "
            f"{queries.shape[0]}, {keys.shape[0]} and {values.shape[0]}"
        )


def check_valid_lens(valid_lens, batch_size, num_queries, num_keys):
    """Validate ``valid_lens`` of shape (batch_size,) or (batch_size, num_queries).

    Each entry must be an integer in [0, num_keys]: the number of leading keys
    a query may attend to.
    """
    if not isinstance(valid_lens, torch.Tensor):
        raise TypeError(
            f"valid_lens must be a torch.Tensor or None, got {type(valid_lens).__name__}"
        )
    if valid_lens.dtype == torch.bool or valid_lens.is_floating_point() or valid_lens.is_complex():
        raise TypeError(f"valid_lens must hold integers, got dtype {valid_lens.dtype}")
    allowed = ((batch_size,), (batch_size, num_queries))
    if tuple(valid_lens.shape) not in allowed:
        raise ValueError(
            f"valid_lens must have shape {allowed[0]} or {allowed[1]} "
            f"(batch_size,) or (batch_size, num_queries), got {tuple(valid_lens.shape)}"
        )
    if valid_lens.numel():
        # torch._check_value raises ValueError here, and under torch.export (the ONNX
        # export of the site's widgets) it becomes a check the exported graph keeps.
        low, high = valid_lens.min().item(), valid_lens.max().item()
        torch._check_value(low >= 0, lambda: f"valid_lens must be >= 0, got minimum {low}")
        torch._check_value(high <= num_keys, lambda: (
            f"valid_lens must be <= the number of keys ({num_keys}), got maximum {high}"))
