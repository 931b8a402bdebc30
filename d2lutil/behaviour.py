"""Behaviour tests for any attention module with the book's interface.

A shape check says little: every bug of ``d2lutil.bugs`` passes one. These tests check what
attention must do, and raise ``AssertionError`` with a message saying what went wrong.

Each takes a ``factory``: a callable ``factory(num_hiddens, num_heads)`` returning a module
with the book's interface, ``forward(queries, keys, values, valid_lens=None)`` (a class such
as ``d2lutil.MultiHeadAttention`` is one), or an already built module of the test's sizes
(a copy is tested). The module is built under a fixed seed, run once (so ``nn.LazyLinear``
layers get their weights), put in ``eval()`` mode and cast to float64, so outputs that must
be equal agree to round-off: ``ATOL`` and ``RTOL`` below.

* ``check_keys_permuted``: permuting keys and values together leaves the output unchanged;
* ``check_padding_ignored``: changing a key and value past ``valid_lens`` changes nothing;
* ``check_future_ignored`` (a causal module): a later token leaves earlier outputs alone;
* ``check_heads_independent``: changing head j's slice of a projection's output changes
  head j's output alone;
* ``check_matches_torch``: outputs equal ``nn.MultiheadAttention``'s with the same weights;
* ``check_cache_matches_full_pass`` (a causal module taking ``cache=``, as
  ``d2lutil.MultiHeadAttention``): decoding token by token through a ``KVCache`` gives the
  outputs of one causal pass.
"""

import copy

import torch
from torch import nn

from .attention import KVCache
from .masks import valid_lens_to_bool, valid_lens_to_key_padding

__all__ = ["check_keys_permuted", "check_padding_ignored", "check_future_ignored",
           "check_heads_independent", "check_matches_torch", "check_cache_matches_full_pass"]

ATOL, RTOL = 1e-9, 1e-7  # float64: equal up to round-off


def _build(factory, num_hiddens, num_heads, seed=0):
    """The module in eval mode, in float64, its lazy layers materialised; the caller's
    random state is left as it was."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        module = copy.deepcopy(factory) if isinstance(factory, nn.Module) else factory(
            num_hiddens, num_heads)
        if not isinstance(module, nn.Module):
            raise TypeError(f"factory must return an nn.Module, got {type(module).__name__}")
        module.eval()
        with torch.no_grad():
            X = torch.randn(1, 2, num_hiddens)
            module(X, X, X)
    return module.double()


def _randn(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed),
                       dtype=torch.float64)


def _assert_close(actual, expected, what):
    if actual.shape != expected.shape:
        raise AssertionError(f"{what}: shapes differ, {tuple(actual.shape)} and "
                             f"{tuple(expected.shape)}")
    if not torch.allclose(actual, expected, rtol=RTOL, atol=ATOL):
        diff = (actual - expected).abs().max().item()
        raise AssertionError(f"{what} (largest difference {diff:.3g})")


@torch.no_grad()
def check_keys_permuted(factory, num_hiddens=8, num_heads=2, batch_size=2, num_queries=3,
                        num_keys=5):
    """Attention reads keys as a set: reordering keys and values together (no valid_lens,
    not causal) must leave every output unchanged."""
    module = _build(factory, num_hiddens, num_heads)
    queries = _randn(1, batch_size, num_queries, num_hiddens)
    keys, values = (_randn(s, batch_size, num_keys, num_hiddens) for s in (2, 3))
    perm = torch.arange(num_keys).flip(0)
    _assert_close(module(queries, keys[:, perm], values[:, perm]),
                  module(queries, keys, values),
                  "permuting keys and values together changed the output: positions are "
                  "mixed somewhere (a reshape to heads without its transpose?)")


@torch.no_grad()
def check_padding_ignored(factory, num_hiddens=8, num_heads=2, batch_size=2, num_queries=3,
                          num_keys=5):
    """Keys and values past ``valid_lens`` are padding: changing them must change nothing.
    Tried with per-sequence (batch_size,) and per-query (batch_size, num_queries) lengths."""
    module = _build(factory, num_hiddens, num_heads)
    queries = _randn(1, batch_size, num_queries, num_hiddens)
    keys, values = (_randn(s, batch_size, num_keys, num_hiddens) for s in (2, 3))
    # Unequal lengths, each >= 1: (batch_size,) then (batch_size, num_queries)
    lens = num_keys - torch.arange(batch_size) * 2 % num_keys
    lens = lens.clamp(min=1)
    per_query = (lens[:, None] - torch.arange(num_queries)).clamp(min=1)
    for valid_lens in (lens, per_query):
        # (batch_size, num_keys, 1): True where no query of the sequence may look
        padded = ~valid_lens_to_bool(valid_lens, num_keys)[:, 0].any(dim=1)[..., None]
        new_keys = torch.where(padded, _randn(4, *keys.shape), keys)
        new_values = torch.where(padded, _randn(5, *values.shape), values)
        _assert_close(module(queries, new_keys, new_values, valid_lens),
                      module(queries, keys, values, valid_lens),
                      f"changing padded keys and values (past valid_lens = "
                      f"{valid_lens.tolist()}) changed the output: the mask lets padding "
                      "in (the wrong way round, the wrong axis, or another sequence's?)")


@torch.no_grad()
def check_future_ignored(factory, num_hiddens=8, num_heads=2, batch_size=2, num_steps=5):
    """For a causal module in self-attention: changing the tokens after position t must
    leave the outputs at positions 0..t unchanged, for every t."""
    module = _build(factory, num_hiddens, num_heads)
    X = _randn(1, batch_size, num_steps, num_hiddens)
    output = module(X, X, X)
    for t in range(num_steps - 1):
        Y = X.clone()
        Y[:, t + 1:] = _randn(2 + t, batch_size, num_steps - t - 1, num_hiddens)
        _assert_close(module(Y, Y, Y)[:, :t + 1], output[:, :t + 1],
                      f"changing the tokens after position {t} changed the outputs at "
                      f"positions 0..{t}: a query sees the future (is the causal mask "
                      "applied?)")


def check_heads_independent(factory, num_hiddens=8, num_heads=2, batch_size=2,
                            num_queries=3, num_keys=5):
    """Head j owns features j*p .. (j+1)*p - 1 (p = num_hiddens / num_heads) of the outputs
    of ``W_q``, ``W_k``, ``W_v`` and of the input of ``W_o`` (the merged heads).

    A forward hook adds a change to head j's slice of one projection's output; a pre-hook
    on ``W_o`` records its input. Head j's slice of it must change, and no other.
    """
    module = _build(factory, num_hiddens, num_heads)
    if num_heads < 2:
        raise ValueError(f"num_heads must be >= 2 to tell heads apart, got {num_heads}")
    for name in ("W_q", "W_k", "W_v", "W_o"):
        if not isinstance(getattr(module, name, None), nn.Module):
            raise AssertionError(f"the module has no {name}: the book's names are W_q, W_k, "
                                 "W_v, W_o")
    p = num_hiddens // num_heads
    queries = _randn(1, batch_size, num_queries, num_hiddens)
    keys, values = (_randn(s, batch_size, num_keys, num_hiddens) for s in (2, 3))
    merged = []
    record = module.W_o.register_forward_pre_hook(lambda m, args: merged.append(args[0]))
    try:
        with torch.no_grad():
            module(queries, keys, values)
        for name in ("W_q", "W_k", "W_v"):
            for j in range(num_heads):
                def nudge(m, args, out, j=j):
                    delta = torch.zeros_like(out)
                    delta[..., j * p:(j + 1) * p] = _randn(7, *out.shape[:-1], p)
                    return out + delta
                hook = getattr(module, name).register_forward_hook(nudge)
                try:
                    with torch.no_grad():
                        module(queries, keys, values)
                finally:
                    hook.remove()
                changed = (merged[-1] - merged[0]).abs().amax(dim=(0, 1))  # (num_hiddens,)
                per_head = changed.reshape(num_heads, p).amax(dim=1)  # (num_heads,)
                others = [i for i in range(num_heads) if i != j and per_head[i] > ATOL]
                if others or per_head[j] <= ATOL:
                    raise AssertionError(
                        f"changing head {j}'s slice of {name}'s output changed heads "
                        f"{[i for i in range(num_heads) if per_head[i] > ATOL]} of W_o's "
                        f"input, expected head {j} alone: the split or merge of heads mixes "
                        "them (or does not follow the book's layout)")
    finally:
        record.remove()


def _torch_twin(module, num_hiddens, num_heads):
    """``nn.MultiheadAttention`` with ``module``'s projections (float64, eval)."""
    names = ("W_q", "W_k", "W_v", "W_o")
    for name in names:
        if not isinstance(getattr(getattr(module, name, None), "weight", None), torch.Tensor):
            raise AssertionError(f"the module has no {name} with a weight: the book's names "
                                 "are W_q, W_k, W_v, W_o")
    layers = [getattr(module, name) for name in names]
    shapes = [tuple(layer.weight.shape) for layer in layers]
    if shapes != [(num_hiddens, num_hiddens)] * 4:
        raise ValueError(f"W_q, W_k, W_v and W_o must have weights of shape {(num_hiddens,) * 2} "
                         f"(num_hiddens, num_hiddens) to map onto nn.MultiheadAttention, got "
                         f"{shapes} (grouped-query attention has no such twin)")
    has_bias = any(getattr(layer, "bias", None) is not None for layer in layers)
    twin = nn.MultiheadAttention(num_hiddens, num_heads, bias=has_bias, batch_first=True)
    twin = twin.double().eval()
    with torch.no_grad():
        twin.in_proj_weight.copy_(torch.cat([layer.weight for layer in layers[:3]]))
        twin.out_proj.weight.copy_(layers[3].weight)
        if has_bias:
            biases = [torch.zeros(num_hiddens, dtype=torch.float64)
                      if layer.bias is None else layer.bias for layer in layers]
            twin.in_proj_bias.copy_(torch.cat(biases[:3]))
            twin.out_proj.bias.copy_(biases[3])
    return twin


@torch.no_grad()
def check_matches_torch(factory, num_hiddens=8, num_heads=2, batch_size=2, num_queries=3,
                        num_keys=5, causal=False):
    """The outputs equal ``nn.MultiheadAttention``'s given the same weights (``W_q``, ``W_k``,
    ``W_v`` stacked into ``in_proj_weight``, ``W_o`` as ``out_proj``): with no mask, with
    per-sequence ``valid_lens`` (as its ``key_padding_mask``, True = ignore) and per-query
    ones (as its ``attn_mask``, where True = NOT allowed, the opposite of SDPA's). With
    ``causal=True`` a bottom-right causal mask is added to each."""
    module = _build(factory, num_hiddens, num_heads)
    twin = _torch_twin(module, num_hiddens, num_heads)
    queries = _randn(1, batch_size, num_queries, num_hiddens)
    keys, values = (_randn(s, batch_size, num_keys, num_hiddens) for s in (2, 3))
    # (num_queries, num_keys), True = may attend
    allowed = (torch.ones(num_queries, num_keys, dtype=torch.bool) if not causal else
               torch.ones(num_queries, num_keys).tril(num_keys - num_queries).bool())
    lens = (num_keys - torch.arange(batch_size) * 2 % num_keys).clamp(min=1)
    per_query = (lens[:, None] - torch.arange(num_queries)).clamp(min=1)
    for valid_lens in (None, lens, per_query):
        kwargs = {"attn_mask": ~allowed}
        if valid_lens is not None and valid_lens.dim() == 1:
            kwargs["key_padding_mask"] = valid_lens_to_key_padding(valid_lens, num_keys)
        elif valid_lens is not None:
            # (batch_size * num_heads, num_queries, num_keys), head j of sequence i at
            # row i * num_heads + j
            mask = valid_lens_to_bool(valid_lens, num_keys) & allowed
            mask = mask.expand(-1, num_heads, -1, -1).reshape(-1, num_queries, num_keys)
            kwargs["attn_mask"] = ~mask
        expected = twin(queries, keys, values, need_weights=False, **kwargs)[0]
        lens_text = "None" if valid_lens is None else valid_lens.tolist()
        _assert_close(module(queries, keys, values, valid_lens), expected,
                      f"the output differs from nn.MultiheadAttention's with the same weights "
                      f"(valid_lens = {lens_text}): check the score scale, which keys and "
                      "values are attended, and the masks")


@torch.no_grad()
def check_cache_matches_full_pass(factory, num_hiddens=8, num_heads=2, batch_size=2,
                                  num_steps=5):
    """For a causal module taking ``cache=`` (a ``KVCache``): feeding a sequence one token
    per call, then two per call, gives the outputs of one pass over the whole sequence."""
    module = _build(factory, num_hiddens, num_heads)
    X = _randn(1, batch_size, num_steps, num_hiddens)
    full = module(X, X, X)
    for step in (1, 2):
        cache = KVCache()
        # Each: (batch_size, up to step, num_hiddens), the queries attending over the cache
        outputs = [module(X[:, t:t + step], X[:, t:t + step], X[:, t:t + step], cache=cache)
                   for t in range(0, num_steps, step)]
        _assert_close(torch.cat(outputs, dim=1), full,
                      f"decoding {step} token(s) per call through a KVCache differs from one "
                      "causal pass: is the causal mask aligned to the bottom-right corner "
                      "(the last query is the last cached position)?")
