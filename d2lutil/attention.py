"""Masked softmax, scaled dot-product attention, multi-head attention and its KV cache.

The classes follow *Dive into Deep Learning* (names, projections ``W_q``,
``W_k``, ``W_v``, ``W_o``, the heads folded into the batch axis), so they can
replace the book's own in its Transformer chapter, with these differences:

* no input is ever modified in place;
* a query with no valid key attends to nothing: zero weights and zero output,
  never uniform weights over padding, never NaN (float32, float16, bfloat16);
* bad arguments raise ``TypeError`` or ``ValueError`` naming the argument;
* ``MultiHeadAttention(..., fused=True)`` runs
  ``torch.nn.functional.scaled_dot_product_attention`` and keeps no weights.

and three additions the book does not have: ``forward(..., head_mask=...)``
scales or removes single heads (ablation, head importance);
``MultiHeadAttention(..., num_kv_heads=...)`` lets groups of query heads share
key/value heads (grouped-query and multi-query attention); ``KVCache`` keeps
the keys and values of earlier calls for step-by-step decoding.
"""

import math
import weakref

import torch
from torch import nn
from torch.nn import functional as F

from .shapes import check_positive_int, check_qkv, check_valid_lens, require_3d

__all__ = ["masked_softmax", "DotProductAttention", "MultiHeadAttention", "KVCache"]


def valid_key_mask(valid_lens, num_keys, device):
    """Boolean mask, True = may attend: the library's one mask of ``valid_lens``.

    ``valid_lens`` has shape (batch_size,) (one length for every query of a
    sequence) or (batch_size, num_queries) (one length per query, e.g. causal);
    the mask has shape (batch_size, 1, num_keys) or (batch_size, num_queries,
    num_keys), to broadcast over the queries (and, with an axis added, heads).
    """
    positions = torch.arange(num_keys, device=device)
    lens = valid_lens.to(device)
    # (batch_size, 1, 1) or (batch_size, num_queries, 1), compared with (num_keys,)
    return positions < (lens[:, None, None] if lens.dim() == 1 else lens[:, :, None])


def masked_weights(scores, mask=None):
    """Softmax over the last axis of ``scores`` (any leading axes), 0 where ``mask`` (None, or
    boolean broadcastable to ``scores``) is False. The one home of the rule: a query with no
    valid key gets all-zero weights, never NaN, and a zero gradient. Modifies nothing."""
    if mask is None:
        return F.softmax(scores, dim=-1)
    # A finite fill (the dtype's lowest value) instead of -inf keeps a fully
    # masked row finite (uniform, then zeroed below), so its gradient is 0, not NaN.
    scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return F.softmax(scores, dim=-1).masked_fill(~mask, 0.0)


def masked_softmax(X, valid_lens=None):
    """Softmax over the last axis of ``X`` that ignores keys past ``valid_lens``.

    X: (batch_size, num_queries, num_keys) attention scores.
    valid_lens: None, (batch_size,) or (batch_size, num_queries) integers.
    Returns weights of X's shape and dtype. Masked keys get weight 0; a query
    with no valid key gets all-zero weights. ``X`` is not modified.
    """
    require_3d("X", X)
    if valid_lens is None:
        return F.softmax(X, dim=-1)
    check_valid_lens(valid_lens, *X.shape)
    return masked_weights(X, valid_key_mask(valid_lens, X.shape[-1], X.device))


class DotProductAttention(nn.Module):
    """Scaled dot-product attention with dropout on the weights.

    After a forward pass ``attention_weights`` holds the weights before
    dropout, of shape (batch_size, num_queries, num_keys).
    """

    def __init__(self, dropout=0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.attention_weights = None

    def forward(self, queries, keys, values, valid_lens=None):
        """queries: (batch_size, num_queries, d); keys: (batch_size, num_keys, d);
        values: (batch_size, num_keys, v). Returns (batch_size, num_queries, v)."""
        check_qkv(queries, keys, values)
        if queries.shape[-1] != keys.shape[-1]:
            raise ValueError(
                "queries and keys must have the same width for dot products, got "
                f"{queries.shape[-1]} and {keys.shape[-1]}"
            )
        d = queries.shape[-1]
        # (batch_size, num_queries, d) @ (batch_size, d, num_keys)
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


def _check_no_padding(valid_lens, num_keys):
    """With a cache, the last query of every sequence must see every cached position.

    A position that even the last query may not see is padding, and a cache that kept it
    would hand it to every later query, which passes no ``valid_lens``.
    """
    last = valid_lens if valid_lens.dim() == 1 else valid_lens[:, -1:]
    if last.numel() and bool((last != num_keys).any()):
        raise ValueError(
            f"with a cache, valid_lens must let the last query of every sequence see all "
            f"{num_keys} cached positions, got {last.reshape(-1).tolist()}: a KVCache serves "
            "sequences of equal length (no padding), since later calls attend to everything "
            "cached"
        )


class KVCache:
    """The keys and values one attention layer has seen so far, for step-by-step decoding.

    Pass it to ``MultiHeadAttention.forward(..., cache=cache)``: the call's keys and
    values are projected and appended here, and the call's queries attend over all the
    cached positions. So a sequence fed token by token (each call's ``valid_lens`` None)
    gives the same outputs as one causal pass, while each step projects only its own token.

    ``keys`` and ``values`` have shape (batch_size, num_kv_heads, length, head_size), or
    are None while nothing is cached. They are kept once per key/value head, not repeated
    for every query head that shares them: that is the memory grouped-query
    (``num_kv_heads < num_heads``) and multi-query (``num_kv_heads=1``) attention save.

    With a cache, ``valid_lens`` counts positions in the whole cache (earlier calls and
    this one), so a causal prefill of T tokens into an empty cache takes ``valid_lens``
    1..T, of shape (batch_size, T), exactly as without a cache, and a one-token step needs
    none. The sequences of a batch must have equal lengths: a cache never holds padding.
    A ``valid_lens`` that hides any position from the last query of a sequence (padding,
    or a ragged batch) raises ``ValueError`` before anything is appended.

    One cache serves one attention layer and one batch; ``reset()`` empties it. Each call
    copies the cache to append (``torch.cat``), which is cheap at this chapter's sizes.
    Under autograd the cached tensors keep their graph: decode under ``torch.no_grad()``.
    """

    def __init__(self):
        self.keys = None
        self.values = None
        self._owner = None

    def __len__(self):
        """The number of cached positions (0 while empty)."""
        return 0 if self.keys is None else self.keys.shape[2]

    def __repr__(self):
        if self.keys is None:
            return "KVCache(empty)"
        return (f"KVCache(length={len(self)}, keys and values of shape "
                f"{tuple(self.keys.shape)}, {self.keys.dtype})")

    @property
    def owner(self):
        """The MultiHeadAttention whose keys and values are cached, or None."""
        return None if self._owner is None else self._owner()

    def reset(self):
        """Forget every cached position (for a new batch of sequences)."""
        self.keys = self.values = self._owner = None

    def nbytes(self):
        """Bytes held by the cached keys and values.

        2 * batch_size * length * num_kv_heads * head_size * element size.
        """
        if self.keys is None:
            return 0
        return sum(X.numel() * X.element_size() for X in (self.keys, self.values))

    def check_fits(self, batch_size, num_kv_heads, head_size, dtype=None, device=None):
        """Raise ``ValueError`` unless new keys and values of these sizes (and, when given,
        dtype and device) can be appended to what is cached. An empty cache fits anything."""
        if self.keys is None:
            return
        names = ["batch_size", "num_kv_heads", "head_size"]
        cached = [self.keys.shape[0], self.keys.shape[1], self.keys.shape[3]]
        new = [batch_size, num_kv_heads, head_size]
        for name, mine, theirs in (("dtype", self.keys.dtype, dtype),
                                   ("device", self.keys.device, device)):
            if theirs is not None:
                names.append(name)
                cached.append(mine)
                new.append(theirs)
        if cached != new:
            raise ValueError(
                f"cache holds ({', '.join(names)}) = {tuple(cached)}, but this call has "
                f"{tuple(new)}; use a new KVCache (or cache.reset()) for another batch"
            )

    def append(self, keys, values, owner=None):
        """Append projected keys and values; return the whole cache as (keys, values).

        keys, values: (batch_size, num_kv_heads, new_length, head_size), already
        projected and split into heads. ``MultiHeadAttention.forward`` calls this (with
        itself as ``owner``); call it yourself only to fill a cache by hand.
        """
        for name, X in (("keys", keys), ("values", values)):
            if not isinstance(X, torch.Tensor) or X.dim() != 4:
                raise ValueError(f"{name} must be a 4-D tensor (batch_size, num_kv_heads, "
                                 f"length, head_size), got {getattr(X, 'shape', type(X))}")
        if keys.shape != values.shape:
            raise ValueError(f"keys and values must have the same shape, got "
                             f"{tuple(keys.shape)} and {tuple(values.shape)}")
        self.check_fits(keys.shape[0], keys.shape[1], keys.shape[3], keys.dtype, keys.device)
        return self._extend(keys, values, owner)

    def _extend(self, keys, values, owner):
        """``append`` once the sizes are known to fit (``MultiHeadAttention.forward``
        checks them before it projects): only dtype and device are compared here."""
        if self.keys is not None and (keys.dtype, keys.device) != (self.keys.dtype,
                                                                    self.keys.device):
            self.check_fits(keys.shape[0], keys.shape[1], keys.shape[3], keys.dtype,
                            keys.device)  # raises, naming the dtype and device
        if self.keys is not None:
            keys = torch.cat([self.keys, keys], dim=2)
            values = torch.cat([self.values, values], dim=2)
        if owner is not None and self._owner is None:
            self._owner = weakref.ref(owner)
        self.keys, self.values = keys, values
        return keys, values


def _projection(in_features, out_features, bias):
    """``nn.Linear(in_features, out_features)``, or ``nn.LazyLinear`` when the input width
    is None (taken at the first call, as in the book)."""
    if in_features is None:
        return nn.LazyLinear(out_features, bias=bias)
    return nn.Linear(in_features, out_features, bias=bias)


def _check_width(name, tensor, projection):
    """A projection whose input width is fixed (given, or taken at the first call) must match."""
    if isinstance(projection.weight, nn.parameter.UninitializedParameter):
        return
    if tensor.shape[-1] != projection.in_features:
        raise ValueError(
            f"{name} must have width {projection.in_features} (fixed by the first call or by "
            f"the constructor), got width {tensor.shape[-1]}; make a new instance for another width"
        )


def _check_call(module, args, kwargs):
    """Forward pre-hook of ``MultiHeadAttention``: ``_check_inputs`` on a call's arguments.
    A call that lacks queries, keys or values is left to ``forward``'s own TypeError."""
    given = dict(zip(("queries", "keys", "values", "valid_lens"), args, strict=False), **kwargs)
    if all(name in given for name in ("queries", "keys", "values")):
        module._check_inputs(*(given.get(name) for name in (
            "queries", "keys", "values", "valid_lens", "head_mask", "cache")))


class MultiHeadAttention(nn.Module):
    """Multi-head attention with the heads folded into the batch axis.

    Args:
        num_hiddens: width d of the projections and of the output.
        num_heads: number of heads h; each head works in width d / h.
        dropout: dropout probability on the attention weights.
        bias: whether the four projections have a bias.
        fused: if True, call ``F.scaled_dot_product_attention`` and keep no
            weights (``attention_weights`` stays None).
        query_size, key_size, value_size: input widths. When None (the
            default, as in the book) the projection is an ``nn.LazyLinear``
            that takes its input width at the first call, so its parameters
            exist only after one forward pass.
        num_kv_heads: number of key/value heads. None (the default) means
            ``num_heads``: every query head has its own keys and values, as in
            the book. Otherwise it must divide ``num_heads``; ``W_k`` and ``W_v``
            then map to ``num_kv_heads * head_size`` features and query head j
            reads key/value head ``j // (num_heads // num_kv_heads)``
            (grouped-query attention; ``num_kv_heads=1`` is multi-query
            attention), the grouping of
            ``F.scaled_dot_product_attention(..., enable_gqa=True)``.

    ``forward(queries, keys, values, valid_lens=None, *, head_mask=None, cache=None)``
    takes queries of shape (batch_size, num_queries, query_size), keys and values
    of shape (batch_size, num_keys, key_size / value_size), and ``valid_lens`` of
    shape (batch_size,) or (batch_size, num_queries); it returns
    (batch_size, num_queries, num_hiddens). Unless fused, ``attention_weights``
    then has shape (batch_size, num_heads, num_queries, num_keys), whatever
    ``num_kv_heads``.

    ``head_mask``, a floating tensor of shape (num_heads,) or
    (batch_size, num_heads), multiplies each head's output (its mixture of the
    values, before the heads are concatenated and ``W_o`` is applied): 1 keeps
    a head, 0 removes it, any other number scales it. It is differentiable, so
    the gradient of a loss with respect to a mask of ones measures how much
    each head matters, in one backward pass. ``attention_weights`` are those
    computed before the mask: a masked head still reports where it looks.

    ``cache``, a ``KVCache``, keeps the projected keys and values of earlier
    calls: this call's are appended to it and the queries attend over all of
    them, so num_keys and ``valid_lens`` count every cached position. See
    ``KVCache`` for what it stores and why a batch must not be ragged.
    """

    def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False, fused=False,
                 query_size=None, key_size=None, value_size=None, num_kv_heads=None):
        super().__init__()
        check_positive_int("num_hiddens", num_hiddens)
        check_positive_int("num_heads", num_heads)
        if num_hiddens % num_heads:
            raise ValueError(
                f"num_hiddens ({num_hiddens}) must be divisible by num_heads ({num_heads})"
            )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout!r}")
        if num_kv_heads is None:
            num_kv_heads = num_heads
        check_positive_int("num_kv_heads", num_kv_heads)
        if num_heads % num_kv_heads:
            raise ValueError(
                f"num_kv_heads ({num_kv_heads}) must divide num_heads ({num_heads}): each "
                "key/value head serves the same number of query heads"
            )
        self.num_hiddens, self.num_heads, self.fused = num_hiddens, num_heads, fused
        self.num_kv_heads, self.head_size = num_kv_heads, num_hiddens // num_heads
        self.dropout_p = dropout
        self.attention = DotProductAttention(dropout)  # the book's name; drops weights
        # Created in this order (W_q, W_k, W_v, W_o) so that a seeded model is the same
        # whatever num_kv_heads; with num_kv_heads = num_heads all four are d x d.
        self.W_q = _projection(query_size, num_hiddens, bias)
        self.W_k = _projection(key_size, num_kv_heads * self.head_size, bias)
        self.W_v = _projection(value_size, num_kv_heads * self.head_size, bias)
        self.W_o = _projection(num_hiddens, num_hiddens, bias)
        self.attention_weights = None
        # Every call's arguments are checked before forward runs (or a cache grows).
        self.register_forward_pre_hook(_check_call, with_kwargs=True)

    # From here to the end of transpose_output: notebook 3's cells tagged "save", the
    # same text (tests/notebooks/test_saved_cells.py), docstrings aside.

    def forward(self, queries, keys, values, valid_lens=None, *, head_mask=None,
                cache=None):
        """Notebook 3's steps; the lines marked notebook 6 and 7 do nothing unless a
        head mask, a cache or shared key/value heads are asked for (see the class).

        queries: (batch_size, num_queries, query_size); keys, values: (batch_size,
        num_keys, key_size / value_size); returns (batch_size, num_queries, num_hiddens).
        Every argument is checked before this runs (``_check_call``).
        """
        # Each: (batch_size * num_heads, length, num_hiddens / num_heads)
        queries = self.transpose_qkv(self.W_q(queries))
        keys = self.transpose_qkv(self.W_k(keys))
        values = self.transpose_qkv(self.W_v(values))
        if cache is not None or len(keys) < len(queries):  # notebook 7
            keys, values = self.share_keys_and_values(keys, values, cache)
        # (batch_size * num_heads, num_queries, num_hiddens / num_heads)
        output = self.attend_folded(queries, keys, values, valid_lens)
        if head_mask is not None:  # notebook 6
            output = self.scale_heads(output, head_mask)
        # (batch_size, num_queries, num_hiddens)
        return self.W_o(self.transpose_output(output))

    def transpose_qkv(self, X):
        """Split the heads off and fold them into the batch axis: (batch_size, length,
        width) -> (batch_size * width / head_size, length, head_size). The number of heads
        comes from the width, so keys and values of num_kv_heads heads fold too."""
        # (batch_size, length, num_heads, num_hiddens / num_heads)
        X = X.reshape(X.shape[0], X.shape[1], X.shape[2] // self.head_size,
                      self.head_size)
        # (batch_size, num_heads, length, num_hiddens / num_heads)
        X = X.permute(0, 2, 1, 3)
        # (batch_size * num_heads, length, num_hiddens / num_heads)
        return X.reshape(X.shape[0] * X.shape[1], X.shape[2], X.shape[3])

    def transpose_output(self, X):
        """Undo ``transpose_qkv``: (batch_size * num_heads, length, head_size) ->
        (batch_size, length, num_hiddens)."""
        # (batch_size, num_heads, length, num_hiddens / num_heads)
        X = X.reshape(X.shape[0] // self.num_heads, self.num_heads, X.shape[1],
                      X.shape[2])
        # (batch_size, length, num_heads, num_hiddens / num_heads)
        X = X.permute(0, 2, 1, 3)
        # (batch_size, length, num_hiddens)
        return X.reshape(X.shape[0], X.shape[1], X.shape[2] * X.shape[3])

    # The library's own steps: notebook 3's class attends with the book's
    # DotProductAttention; this one views the folded heads as an axis of their own.

    def attend_folded(self, queries, keys, values, valid_lens):
        """``attend`` on heads folded as (batch_size * num_heads, length, head_size)."""
        # Each: (batch_size, num_heads, length, head_size), a view of the folded heads
        queries, keys, values = (X.reshape(len(X) // self.num_heads, self.num_heads,
                                           *X.shape[1:]) for X in (queries, keys, values))
        output = self.attend(queries, keys, values, valid_lens)
        # (batch_size * num_heads, num_queries, head_size)
        return output.reshape(len(output) * self.num_heads, *output.shape[2:])

    def share_keys_and_values(self, keys, values, cache=None):
        """Notebook 7: append this call's keys and values to ``cache`` (if given), then
        give each query head those of its group. Folded in, (batch_size * num_kv_heads,
        length, head_size); folded out, (batch_size * num_heads, all length, head_size)."""
        if cache is not None:
            keys, values = self._extend_cache(cache, keys, values)
        return self.repeat_kv(keys), self.repeat_kv(values)

    def repeat_kv(self, X):
        """Give each query head the keys (or values) of its group (notebook 7).

        (batch_size * num_kv_heads, length, head_size) ->
        (batch_size * num_heads, length, head_size): key/value head g is
        repeated num_heads / num_kv_heads times in a row, so query head j gets
        head j // (num_heads // num_kv_heads). Returns ``X`` itself when
        num_kv_heads = num_heads.
        """
        group_size = self.num_heads // self.num_kv_heads
        if group_size == 1:
            return X
        rows, length, head_size = X.shape
        # (batch_size, num_kv_heads, length, head_size)
        X = X.reshape(rows // self.num_kv_heads, self.num_kv_heads, length,
                      head_size)
        # (batch_size, num_heads, length, head_size), then folded
        X = torch.repeat_interleave(X, group_size, dim=1)
        return X.reshape(rows * group_size, length, head_size)

    def attend(self, queries, keys, values, valid_lens=None):
        """Every head at once on a head axis: queries (batch_size, num_heads, num_queries,
        head_size), keys and values (batch_size, num_heads, num_keys, head_size) -> (batch_size,
        num_heads, num_queries, head_size); its steps ``attention_mask`` and ``score_scale``
        are methods. Unless fused, keeps (batch_size, num_heads, num_queries, num_keys) weights.
        """
        mask = self.attention_mask(valid_lens, queries.shape[2], keys.shape[2],
                                   queries.device)
        if not self.fused:
            # (batch_size, num_heads, num_queries, num_keys), also where the book's
            # Transformer reads them (block.attention.attention.attention_weights)
            self.attention_weights = self.attention.attention_weights = masked_weights(
                queries @ keys.transpose(2, 3) / self.score_scale(), mask)
            return self.attention.dropout(self.attention_weights) @ values
        self.attention_weights = None
        # Kernels disagree on rows with no valid key (NaN on some backends): let such
        # rows see every key, then zero their output, as masked_weights zeroes weights.
        empty = None if mask is None else ~mask.any(dim=-1, keepdim=True)
        output = F.scaled_dot_product_attention(
            queries, keys, values, attn_mask=None if mask is None else mask | empty,
            dropout_p=self.dropout_p if self.training else 0.0, scale=1 / self.score_scale())
        return output if mask is None else output.masked_fill(empty, 0.0)

    def attention_mask(self, valid_lens, num_queries, num_keys, device):
        """(batch_size, 1, 1 or num_queries, num_keys), True = may attend, broadcast over
        the heads; None without ``valid_lens``."""
        if valid_lens is None:
            return None
        return valid_key_mask(valid_lens, num_keys, device)[:, None]

    def score_scale(self):
        """What the scores are divided by: sqrt(head_size), the width of one head."""
        return math.sqrt(self.head_size)

    def scale_heads(self, output, head_mask):
        """Each head's output times its entry of ``head_mask`` (notebook 6)."""
        batch_size = output.shape[0] // self.num_heads
        scale = head_mask.to(output.device, output.dtype)
        # (num_heads,) or (batch_size, num_heads) -> (batch_size, num_heads)
        scale = scale.expand(batch_size, self.num_heads)
        # (batch_size * num_heads, 1, 1): the row order of the folded heads,
        # one factor per head and sequence
        return output * scale.reshape(-1, 1, 1)

    def _extend_cache(self, cache, keys, values):
        """Append this call's keys and values to ``cache``; return all of them
        (notebook 7). Each comes in and goes out folded, as
        (batch_size * num_kv_heads, length, head_size)."""
        batch_size = keys.shape[0] // self.num_kv_heads
        # Each: (batch_size, num_kv_heads, new length, head_size), appended
        keys, values = (X.reshape(batch_size, self.num_kv_heads, *X.shape[1:])
                        for X in (keys, values))
        # Each: (batch_size, num_kv_heads, cached length, head_size)
        keys, values = cache._extend(keys, values, owner=self)
        return (X.reshape(batch_size * self.num_kv_heads, *X.shape[2:])
                for X in (keys, values))

    def _check_inputs(self, queries, keys, values, valid_lens, head_mask, cache):
        """Every argument of ``forward``, checked before anything is computed or cached."""
        check_qkv(queries, keys, values)
        batch_size, num_queries, num_keys = queries.shape[0], queries.shape[1], keys.shape[1]
        if cache is not None:
            self._check_cache(cache, batch_size)
            # The queries attend over the cached keys and the call's own.
            num_keys += len(cache)
        if valid_lens is not None:
            check_valid_lens(valid_lens, batch_size, num_queries, num_keys)
            if cache is not None:
                _check_no_padding(valid_lens, num_keys)
        if head_mask is not None:
            self._check_head_mask(head_mask, batch_size)
        for name, tensor, projection in (("queries", queries, self.W_q),
                                         ("keys", keys, self.W_k), ("values", values, self.W_v)):
            _check_width(name, tensor, projection)

    def _check_cache(self, cache, batch_size):
        if not isinstance(cache, KVCache):
            raise TypeError(f"cache must be a d2lutil.KVCache or None, got {type(cache).__name__}")
        if cache.owner is not None and cache.owner is not self:
            raise ValueError(
                "cache holds the keys and values of another MultiHeadAttention; "
                "use one KVCache per attention layer (or cache.reset() it first)"
            )
        cache.check_fits(batch_size, self.num_kv_heads, self.head_size)

    def _check_head_mask(self, head_mask, batch_size):
        if not isinstance(head_mask, torch.Tensor):
            raise TypeError("head_mask must be a floating torch.Tensor or None, "
                            f"got {type(head_mask).__name__}")
        if not head_mask.is_floating_point():
            raise TypeError("head_mask must hold floating-point numbers, "
                            f"got dtype {head_mask.dtype}")
        allowed = ((self.num_heads,), (batch_size, self.num_heads))
        if tuple(head_mask.shape) not in allowed:
            raise ValueError(
                f"head_mask must have shape {allowed[0]} or {allowed[1]}, that is (num_heads,) "
                f"or (batch_size, num_heads), got {tuple(head_mask.shape)}"
            )
