"""KVCache: decoding token by token with a cache gives what one causal pass gives.

The passes without a cache are themselves checked against the definitions in
test_attention_heads.py; here the cache must reproduce them, hold the keys and
values once per key/value head, and refuse what it cannot serve.
"""

import pytest
import torch

from attention_cases import BOTH_PATHS, raises_naming
from d2lutil import KVCache, MultiHeadAttention

GROUPINGS = pytest.mark.parametrize("num_kv_heads", [1, 2, 4], ids=["kv1", "kv2", "kv4"])
NUM_HIDDENS, NUM_HEADS, BATCH_SIZE, LENGTH = 16, 4, 2, 7


def model_with(num_kv_heads=NUM_HEADS, fused=False, seed=0, **kwargs):
    torch.manual_seed(seed)
    return MultiHeadAttention(NUM_HIDDENS, NUM_HEADS, num_kv_heads=num_kv_heads, fused=fused,
                              query_size=NUM_HIDDENS, key_size=NUM_HIDDENS,
                              value_size=NUM_HIDDENS, **kwargs).eval()


def tokens(batch_size=BATCH_SIZE, length=LENGTH, seed=1):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(batch_size, length, NUM_HIDDENS, generator=gen)


def causal_lens(first, last, batch_size=BATCH_SIZE):
    """valid_lens first..last for each sequence: query i sees keys 0 .. first + i - 1."""
    return torch.arange(first, last + 1).repeat(batch_size, 1)


@torch.no_grad()
def decode(model, X, prefill, cache, **kwargs):
    """Feed X to self-attention through ``cache``: the first ``prefill`` tokens at once
    (causal), then one token per call with no valid_lens."""
    outputs = []
    if prefill:
        part = X[:, :prefill]
        outputs.append(model(part, part, part, causal_lens(1, prefill, X.shape[0]),
                             cache=cache, **kwargs))
    for t in range(prefill, X.shape[1]):
        token = X[:, t:t + 1]
        outputs.append(model(token, token, token, cache=cache, **kwargs))
    # (batch_size, length, num_hiddens)
    return torch.cat(outputs, dim=1)


@BOTH_PATHS
@GROUPINGS
@pytest.mark.parametrize("prefill", [0, 1, 3], ids=["no-prefill", "prefill-1", "prefill-3"])
def test_decoding_with_a_cache_equals_one_causal_pass(fused, num_kv_heads, prefill):
    model = model_with(num_kv_heads, fused=fused)
    X = tokens()
    with torch.no_grad():
        expected = model(X, X, X, causal_lens(1, LENGTH))
    cache = KVCache()
    out = decode(model, X, prefill, cache)
    assert (out - expected).abs().max() <= 1e-5
    assert len(cache) == LENGTH


@GROUPINGS
def test_the_cache_holds_each_key_value_head_once(num_kv_heads):
    model = model_with(num_kv_heads)
    X = tokens()
    cache = KVCache()
    decode(model, X, 3, cache)
    head_size = NUM_HIDDENS // NUM_HEADS
    assert cache.keys.shape == cache.values.shape == (BATCH_SIZE, num_kv_heads, LENGTH,
                                                      head_size)
    for W, cached in ((model.W_k, cache.keys), (model.W_v, cache.values)):
        # (batch_size, length, num_kv_heads * head_size) -> (batch_size, num_kv_heads, ...)
        projected = (X @ W.weight.T).reshape(BATCH_SIZE, LENGTH, num_kv_heads, head_size)
        assert (cached - projected.transpose(1, 2)).abs().max() <= 1e-6
    element_size = torch.finfo(torch.float32).bits // 8
    assert cache.nbytes() == 2 * BATCH_SIZE * LENGTH * num_kv_heads * head_size * element_size


@BOTH_PATHS
def test_a_chunk_after_the_prefill_counts_positions_in_the_whole_cache(fused):
    model = model_with(2, fused=fused)
    X = tokens()
    with torch.no_grad():
        expected = model(X, X, X, causal_lens(1, LENGTH))
        cache = KVCache()
        first = model(X[:, :3], X[:, :3], X[:, :3], causal_lens(1, 3), cache=cache)
        # positions 3..6 see 4..7 cached keys
        rest = model(X[:, 3:], X[:, 3:], X[:, 3:], causal_lens(4, LENGTH), cache=cache)
    assert (torch.cat([first, rest], dim=1) - expected).abs().max() <= 1e-5


def test_weights_cover_every_cached_position():
    model = model_with(1)
    X = tokens()
    cache = KVCache()
    for t in range(LENGTH):
        model(X[:, t:t + 1], X[:, t:t + 1], X[:, t:t + 1], cache=cache)
        assert model.attention_weights.shape == (BATCH_SIZE, NUM_HEADS, 1, t + 1)
    with torch.no_grad():
        model(X, X, X, causal_lens(1, LENGTH))
    causal_last_row = model.attention_weights[:, :, -1:]
    decode(model, X, LENGTH - 1, KVCache())
    assert (model.attention_weights - causal_last_row).abs().max() <= 1e-6


@BOTH_PATHS
def test_head_mask_with_a_cache(fused):
    model = model_with(2, fused=fused)
    X = tokens()
    head_mask = torch.tensor([[1.0, 0.0, 1.0, 0.5], [0.0, 1.0, 1.0, 1.0]])
    with torch.no_grad():
        expected = model(X, X, X, causal_lens(1, LENGTH), head_mask=head_mask)
    out = decode(model, X, 2, KVCache(), head_mask=head_mask)
    assert (out - expected).abs().max() <= 1e-5


@BOTH_PATHS
def test_cross_attention_caches_the_memory_once(fused):
    """The encoder's outputs are appended by the first call; later calls bring no keys."""
    model = model_with(2, fused=fused)
    memory, queries = tokens(length=5, seed=2), tokens(length=4, seed=3)
    with torch.no_grad():
        expected = model(queries, memory, memory)
        cache = KVCache()
        outputs = [model(queries[:, :1], memory, memory, cache=cache)]
        no_keys = memory[:, :0]  # (batch_size, 0, num_hiddens)
        outputs += [model(queries[:, t:t + 1], no_keys, no_keys, cache=cache)
                    for t in range(1, 4)]
    assert len(cache) == 5
    assert (torch.cat(outputs, dim=1) - expected).abs().max() <= 1e-5


# ------------------------------------------------------------------ the API

def test_reset_empties_the_cache_for_a_new_batch():
    model, cache = model_with(2), KVCache()
    for _ in range(2):  # new, then reset
        assert len(cache) == 0 and cache.nbytes() == 0 and repr(cache) == "KVCache(empty)"
        assert cache.keys is None and cache.values is None and cache.owner is None
        decode(model, tokens(), 3, cache)
        assert cache.owner is model and "length=7" in repr(cache)
        cache.reset()
    X = tokens(batch_size=3, seed=4)
    with torch.no_grad():
        expected = model(X, X, X, causal_lens(1, LENGTH, batch_size=3))
    assert (decode(model, X, 0, cache) - expected).abs().max() <= 1e-5


# ---------------------------------------------------------------- refusals

X = tokens()
RAGGED = {
    "padding, one length per sequence": torch.tensor([5, 3]),
    "padding inside a causal prefill": torch.tensor([[1, 2, 3, 4, 5], [1, 2, 3, 3, 3]]),
    "every sequence padded": torch.tensor([4, 4]),
}


@BOTH_PATHS
@pytest.mark.parametrize("valid_lens", RAGGED.values(), ids=RAGGED.keys())
def test_a_ragged_batch_is_refused_before_anything_is_cached(fused, valid_lens):
    model = model_with(2, fused=fused)
    cache = KVCache()
    with pytest.raises(ValueError) as info:
        model(X[:, :5], X[:, :5], X[:, :5], valid_lens, cache=cache)
    message = str(info.value)
    assert "with a cache, valid_lens must let the last query of every sequence see all 5" in message
    assert "equal length" in message
    assert len(cache) == 0


def test_a_step_that_hides_cached_positions_is_refused():
    model = model_with(2)
    cache = KVCache()
    decode(model, X, 4, cache)
    with pytest.raises(ValueError, match="see all 8 cached positions, got \\[8, 6\\]"):
        model(X[:, :1], X[:, :1], X[:, :1], torch.tensor([[8], [6]]), cache=cache)
    assert len(cache) == LENGTH
    # Lengths that cover the whole cache are accepted (and change nothing).
    other = KVCache()
    decode(model, X, 4, other)
    with torch.no_grad():
        with_lens = model(X[:, :1], X[:, :1], X[:, :1], torch.tensor([8, 8]), cache=cache)
        without = model(X[:, :1], X[:, :1], X[:, :1], cache=other)
    assert torch.equal(with_lens, without)


def hand_filled(batch_size=BATCH_SIZE, num_kv_heads=2, head_size=4, dtype=torch.float32):
    cache = KVCache()
    shape = (batch_size, num_kv_heads, 3, head_size)
    cache.append(torch.zeros(shape, dtype=dtype), torch.zeros(shape, dtype=dtype))
    return cache


BAD_CACHES = {
    "batch size": (hand_filled(batch_size=3), ValueError,
                   "cache holds (batch_size, num_kv_heads, head_size) = (3, 2, 4), "
                   "but this call has (2, 2, 4)"),
    "num_kv_heads": (hand_filled(num_kv_heads=4), ValueError,
                     "cache holds (batch_size, num_kv_heads, head_size) = (2, 4, 4)"),
    "head_size": (hand_filled(head_size=8), ValueError,
                  "cache holds (batch_size, num_kv_heads, head_size) = (2, 2, 8)"),
    "dtype": (hand_filled(dtype=torch.float64), ValueError, "cache holds (batch_size, "
              "num_kv_heads, head_size, dtype, device) = (2, 2, 4, torch.float64"),
    "type": ({"keys": None}, TypeError, "cache must be a d2lutil.KVCache or None, got dict"),
}


@BOTH_PATHS
@pytest.mark.parametrize("cache, error, message", BAD_CACHES.values(), ids=BAD_CACHES.keys())
def test_a_cache_that_does_not_fit_the_call_is_named(fused, cache, error, message):
    model = model_with(2, fused=fused)
    before = len(cache) if isinstance(cache, KVCache) else None
    with raises_naming(error, message):
        model(X[:, :1], X[:, :1], X[:, :1], cache=cache)
    if before is not None:
        assert len(cache) == before


def test_one_cache_per_layer():
    first, second = model_with(2), model_with(2, seed=1)
    cache = KVCache()
    first(X[:, :1], X[:, :1], X[:, :1], cache=cache)
    with pytest.raises(ValueError, match="cache holds the keys and values of another"):
        second(X[:, :1], X[:, :1], X[:, :1], cache=cache)
    assert len(cache) == 1


def test_append_checks_its_arguments():
    cache = KVCache()
    with pytest.raises(ValueError, match="keys must be a 4-D tensor"):
        cache.append(torch.zeros(2, 3, 4), torch.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="keys and values must have the same shape"):
        cache.append(torch.zeros(2, 1, 3, 4), torch.zeros(2, 1, 2, 4))
    assert len(cache) == 0
    cache.append(torch.zeros(2, 1, 3, 4), torch.zeros(2, 1, 3, 4))
    with pytest.raises(ValueError, match=r"cache holds \(batch_size, num_kv_heads, head_size, "
                                         r"dtype, device\) = \(2, 1, 4, torch.float32"):
        cache.append(torch.zeros(3, 1, 1, 4), torch.zeros(3, 1, 1, 4))
    assert len(cache) == 3


def test_a_call_checks_that_the_cache_fits_once(monkeypatch):
    """forward checks the cache before it projects and does not check it again."""
    model, cache, calls = model_with(2), KVCache(), []
    X = tokens()
    model(X[:, :1], X[:, :1], X[:, :1], cache=cache)
    check_fits = KVCache.check_fits
    monkeypatch.setattr(KVCache, "check_fits",
                        lambda self, *args: calls.append(args) or check_fits(self, *args))
    model(X[:, 1:2], X[:, 1:2], X[:, 1:2], cache=cache)
    assert calls == [(BATCH_SIZE, 2, NUM_HIDDENS // NUM_HEADS)] and len(cache) == 2
