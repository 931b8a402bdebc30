"""Converters between the mask conventions of one attention call.

Each convention says, for every query, which keys it may attend to:

==========================  ======================================  ==========================
convention                  shape                                   a key is attended where
==========================  ======================================  ==========================
the book's ``valid_lens``   (batch_size,) or                        its position < the length
                            (batch_size, num_queries), integers
SDPA boolean ``attn_mask``  broadcastable to (batch_size,           True
                            num_heads, num_queries, num_keys)
additive float mask         same as SDPA's, floats added to the     0 (-inf: never)
                            scores
``nn.MultiheadAttention``'s (batch_size, num_keys), bool            False (True = *ignore*)
``key_padding_mask``
Hugging Face                (batch_size, sequence_length), 0 or 1   1 (0 = padding)
``attention_mask``
==========================  ======================================  ==========================

The Hugging Face ``attention_mask`` is stated as its documentation gives it (the glossary
of ``transformers``); this module has no converter for it. Beware: ``nn.MultiheadAttention``'s
own boolean ``attn_mask`` means True = *not* allowed, the opposite of SDPA's.

A ``key_padding_mask`` has one row per sequence, so only per-sequence ``valid_lens`` of
shape (batch_size,) convert to it. A mask converts back to ``valid_lens`` only when each of
its rows is a prefix of attended keys followed by ignored ones.
"""

import torch

from .attention import valid_key_mask
from .shapes import check_positive_int, check_valid_lens

__all__ = ["valid_lens_to_bool", "bool_to_valid_lens", "bool_to_additive", "additive_to_bool",
           "valid_lens_to_key_padding", "key_padding_to_valid_lens"]


def _check_lens(valid_lens, num_keys):
    check_positive_int("num_keys", num_keys)
    if not isinstance(valid_lens, torch.Tensor):
        raise TypeError(f"valid_lens must be a torch.Tensor, got {type(valid_lens).__name__}")
    if valid_lens.dim() not in (1, 2):
        raise ValueError("valid_lens must have shape (batch_size,) or (batch_size, "
                         f"num_queries), got {tuple(valid_lens.shape)}")
    check_valid_lens(valid_lens, valid_lens.shape[0], valid_lens.shape[-1], num_keys)


def _check_mask(name, mask, kind, dims=None):
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(mask).__name__}")
    if kind == "bool" and mask.dtype != torch.bool:
        raise TypeError(f"{name} must be a boolean tensor, got dtype {mask.dtype}")
    if kind == "float" and not mask.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {mask.dtype}")
    if dims is not None and mask.dim() not in dims:
        raise ValueError(f"{name} must be {' or '.join(map(str, dims))}-D, "
                         f"got shape {tuple(mask.shape)}")


def _prefix_lens(keep, name):
    """The number of leading True of each row of ``keep``; ValueError unless each row is
    a run of True followed by a run of False."""
    lens = keep.sum(dim=-1)
    prefix = torch.arange(keep.shape[-1], device=keep.device) < lens[..., None]
    if not torch.equal(prefix, keep):
        bad = (prefix != keep).any(dim=-1).nonzero()[0].tolist()
        raise ValueError(f"{name} must list, in every row, the attended keys first and the "
                         f"ignored keys after them (a prefix, as valid_lens says); row {bad} "
                         "is not")
    return lens


def valid_lens_to_bool(valid_lens, num_keys):
    """The book's ``valid_lens`` as an SDPA boolean mask, True = may attend.

    valid_lens: (batch_size,) or (batch_size, num_queries) ints in [0, num_keys].
    Returns (batch_size, 1, 1, num_keys) or (batch_size, 1, num_queries, num_keys),
    which broadcasts over the heads (and, for the first, the queries).
    """
    _check_lens(valid_lens, num_keys)
    # d2lutil.attention's one mask, (batch_size, 1 or num_queries, num_keys), a head axis added
    return valid_key_mask(valid_lens, num_keys, valid_lens.device)[:, None]


def bool_to_valid_lens(mask):
    """An SDPA boolean mask (True = may attend) as the book's ``valid_lens``.

    mask: (batch_size, 1, q, num_keys) or (batch_size, q, num_keys), with q = 1 or
    num_queries; each row a prefix of True. Returns (batch_size,) when q = 1, else
    (batch_size, num_queries), int64. A mask that differs between heads has none.
    """
    _check_mask("mask", mask, "bool", (3, 4))
    if mask.dim() == 4:
        if mask.shape[1] != 1:
            raise ValueError("mask must have a head axis of size 1 (the same for every "
                             f"head) to become valid_lens, got shape {tuple(mask.shape)}")
        mask = mask[:, 0]
    lens = _prefix_lens(mask, "mask")
    return lens[:, 0] if lens.shape[1] == 1 else lens


def bool_to_additive(mask, dtype=torch.float32):
    """An SDPA boolean mask (True = may attend) as an additive float mask: 0 where True,
    -inf where False, same shape. A row with no True is all -inf: SDPA (torch 2.14, CPU)
    returns zeros there, `nn.MultiheadAttention` NaN."""
    _check_mask("mask", mask, "bool")
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point torch.dtype, got {dtype!r}")
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(
        ~mask, float("-inf"))


def additive_to_bool(mask):
    """An additive float mask (0 = attend, -inf = never) as an SDPA boolean mask, True = may
    attend, same shape. Any other value (a bias such as ALiBi, a finite fill) raises."""
    _check_mask("mask", mask, "float")
    attend = mask == 0
    if not bool((attend | (mask == float("-inf"))).all()):
        other = mask[~attend & (mask != float("-inf"))][0].item()
        raise ValueError("mask must hold only 0 (attend) and -inf (ignore) to become a "
                         f"boolean mask, got {other!r}")
    return attend


def valid_lens_to_key_padding(valid_lens, num_keys):
    """Per-sequence ``valid_lens`` (batch_size,) as ``nn.MultiheadAttention``'s
    ``key_padding_mask`` (batch_size, num_keys), True = IGNORE the key.

    Per-query ``valid_lens`` (batch_size, num_queries) raise ``ValueError``: a
    key_padding_mask has one row per sequence; use ``valid_lens_to_bool`` instead.
    """
    _check_lens(valid_lens, num_keys)
    if valid_lens.dim() != 1:
        raise ValueError("valid_lens must have shape (batch_size,) for a key_padding_mask, "
                         f"which has one row per sequence; got per-query valid_lens of shape "
                         f"{tuple(valid_lens.shape)}: use valid_lens_to_bool (an attn_mask)")
    # (batch_size, num_keys)
    return ~valid_key_mask(valid_lens, num_keys, valid_lens.device)[:, 0]


def key_padding_to_valid_lens(mask):
    """``nn.MultiheadAttention``'s ``key_padding_mask`` (batch_size, num_keys), True =
    ignore, as per-sequence ``valid_lens`` (batch_size,) int64. Each row must be valid keys
    then padding (False... then True...); otherwise ``ValueError``."""
    _check_mask("mask", mask, "bool", (2,))
    return _prefix_lens(~mask, "mask (a key_padding_mask, True = ignore)")
