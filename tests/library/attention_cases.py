"""What the attention tests share: both code paths, seeded inputs, named-error cases.

Used by test_attention.py, test_attention_heads.py and test_kv_cache.py.
"""

import re

import pytest
import torch

#: Run a test on the path that keeps the attention weights and on the fused one.
BOTH_PATHS = pytest.mark.parametrize("fused", [False, True], ids=["weights", "fused"])


def random_qkv(batch_size=3, num_queries=4, num_keys=6, width=16, seed=0,
               dtype=torch.float32):
    """Seeded queries, keys and values, each (batch_size, length, width)."""
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(batch_size, n, width, generator=gen, dtype=dtype)
                 for n in (num_queries, num_keys, num_keys))


def named_cases(argnames, cases):
    """Parametrize over ``cases`` ending in (error, message), each case named by its message."""
    return pytest.mark.parametrize(argnames, cases, ids=[case[-1] for case in cases])


def raises_naming(error, message):
    """``pytest.raises(error)`` whose text must contain ``message`` word for word."""
    return pytest.raises(error, match=re.escape(message))
