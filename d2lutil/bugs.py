"""A catalogue of the bugs learners really make in multi-head attention.

Every class has the book's interface: ``__init__(num_hiddens, num_heads, dropout=0.0,
bias=False)``, ``forward(queries, keys, values, valid_lens=None)``, projections ``W_q``,
``W_k``, ``W_v``, ``W_o``, ``num_heads``, and ``attention_weights`` of shape (batch_size,
num_heads, num_queries, num_keys). Each gives outputs of the right shape: a shape check
passes, and only a behaviour test (``d2lutil.behaviour``) catches it.

``Reference`` is ``d2lutil.attention.MultiHeadAttention``, whose steps are small methods
(``transpose_qkv``, ``score_scale``, ``attention_mask``, ``transpose_output``), with its mask
split in two more (the padding mask, the causal mask). Each bug subclasses ``Reference`` (or
``CausalReference``) and replaces ONE method, so with the same seed it has the same weights
and differs from its reference by the bug alone.

Causal attention is a constructor flag, ``causal=True`` (``CausalReference``): the mask
then hides every key after a query's own position, aligned to the bottom-right corner, so
query i of num_queries is position num_keys - num_queries + i. That alignment is what keeps
a decoding step right once a ``KVCache`` holds earlier keys: ``forward(..., cache=cache)``
(inherited) appends this call's keys and values, and the queries attend over all of them.

``CATALOGUE`` maps a name to an ``Entry``: the bug, its correct reference, the symptom, the
public thread it comes from, and the behaviour test that catches it.
"""

import math
from typing import NamedTuple

import torch

from .attention import MultiHeadAttention, valid_key_mask

__all__ = ["Reference", "CausalReference", "HeadAxisAttention", "LoopAttention",
           "LAYOUTS", "CATALOGUE", "Entry", "mystery", "diagnose", "VERDICTS"]


class Reference(MultiHeadAttention):
    """The correct module: ``MultiHeadAttention``'s steps, each a method a bug replaces."""

    def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False, causal=False):
        super().__init__(num_hiddens, num_heads, dropout, bias)
        self.causal = causal

    def attention_mask(self, valid_lens, num_queries, num_keys, device):
        """The padding mask and the causal mask: True where both allow, or None."""
        mask = self.padding_mask(valid_lens, num_queries, num_keys)
        causal = self.causal_mask(num_queries, num_keys, device)
        if causal is not None:
            mask = causal if mask is None else mask & causal
        return mask

    def padding_mask(self, valid_lens, num_queries, num_keys):
        """(batch_size, 1, 1 or num_queries, num_keys), True = may attend, or None: the
        library's mask of ``valid_lens``, which broadcasts over the heads."""
        device = getattr(valid_lens, "device", None)
        return super().attention_mask(valid_lens, num_queries, num_keys, device)

    def causal_mask(self, num_queries, num_keys, device):
        """(num_queries, num_keys), True = may attend, or None unless ``causal``.

        Bottom-right aligned: query i is position num_keys - num_queries + i."""
        if not self.causal:
            return None
        offset = num_keys - num_queries
        rows = torch.arange(num_queries, device=device)[:, None] + offset
        return torch.arange(num_keys, device=device) <= rows


class CausalReference(Reference):
    """``Reference`` with ``causal=True``: decoder self-attention, also step by step."""

    def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False, causal=True):
        super().__init__(num_hiddens, num_heads, dropout, bias, causal)


class NoTransposeHeads(Reference):
    """(a) Heads split by a reshape alone: each head gets a block of memory that mixes
    positions and features, and the merge mixes them back the same wrong way."""

    def transpose_qkv(self, X):
        batch_size, length, width = X.shape
        # BUG: (batch_size, length, num_heads, head_size) needs permute(0, 2, 1, 3) here
        X = X.reshape(batch_size, length, self.num_heads, width // self.num_heads)
        return X.reshape(batch_size * self.num_heads, length, -1)

    def transpose_output(self, X):
        _, length, head_size = X.shape
        # BUG: reshaped to (batch_size, length, num_hiddens) without the permute back
        return X.reshape(-1, length, self.num_heads * head_size)


class ScaleByNumHiddens(Reference):
    """(b) Scores divided by sqrt(num_hiddens) instead of sqrt(num_hiddens / num_heads)."""

    def score_scale(self):
        return math.sqrt(self.num_hiddens)  # BUG: the width of one head is head_size


class MaskInverted(Reference):
    """(c) The boolean masks the wrong way round: valid keys hidden, padding attended; with
    ``causal=True``, each query sees the future and not the past."""

    def padding_mask(self, valid_lens, num_queries, num_keys):
        mask = super().padding_mask(valid_lens, num_queries, num_keys)
        return None if mask is None else ~mask  # BUG: True already means "may attend"

    def causal_mask(self, num_queries, num_keys, device):
        mask = super().causal_mask(num_queries, num_keys, device)
        return None if mask is None else ~mask  # BUG: the same inversion


class CausalMaskInverted(MaskInverted, CausalReference):
    """(c) as reported: decoder self-attention whose causal mask is the wrong way round,
    so each query sees the future and not its own past."""

    def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False, causal=True):
        super().__init__(num_hiddens, num_heads, dropout, bias, causal)


class DroppedCausalMask(CausalReference):
    """(d) Decoder self-attention that accepts ``causal=True`` and never applies it (in the
    report, on the code path that does not fuse the attention)."""

    def causal_mask(self, num_queries, num_keys, device):
        return None  # BUG: the flag is stored, the mask is never built


class KeysFromQueries(Reference):
    """(e) Cross-attention whose keys and values are the decoder's states (the queries),
    not the encoder's outputs. ``valid_lens`` then counts the wrong keys too."""

    def forward(self, queries, keys, values, valid_lens=None, **kwargs):
        # BUG: should be super().forward(queries, keys, values, ...)
        return super().forward(queries, queries, queries, valid_lens, **kwargs)


class MaskOverQueries(Reference):
    """(f) The padding mask of the wrong sequence: laid over the queries (rows), not the
    keys (columns), so a query inside the valid length attends to the padded keys."""

    def padding_mask(self, valid_lens, num_queries, num_keys):
        if valid_lens is None:
            return None
        lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
        # BUG: (batch_size, num_queries) over query positions, should be over key positions
        rows = torch.arange(num_queries, device=valid_lens.device) < lens
        return rows[:, None, :, None]  # (batch_size, 1, num_queries, 1)


class RepeatNotInterleave(Reference):
    """(g) Lengths repeated with ``repeat`` for the folded heads, where ``repeat_interleave``
    is needed: folded row i * num_heads + j gets the lengths of another sequence. The
    report has the mirror image: heads folded head-major, the mask repeated per sequence."""

    def padding_mask(self, valid_lens, num_queries, num_keys):
        if valid_lens is None:
            return None
        # BUG: torch.repeat_interleave(valid_lens, self.num_heads, dim=0)
        lens = valid_lens.repeat(self.num_heads, *[1] * (valid_lens.dim() - 1))
        # (batch_size * num_heads, 1 or num_queries, num_keys), then the folded order
        mask = valid_key_mask(lens, num_keys, lens.device)
        return mask.reshape(-1, self.num_heads, *mask.shape[1:])


class MaskNotBroadcastOverHeads(Reference):
    """(g') A mask (batch_size, 1 or num_queries, num_keys) with no head axis: broadcast
    against (batch_size, num_heads, ...) its batch axis lines up with the heads, so head j
    gets sequence j's mask. Silent when batch_size = num_heads; otherwise a RuntimeError.
    The report's mask had two axes, (batch_size, num_keys), and raised."""

    def padding_mask(self, valid_lens, num_queries, num_keys):
        if valid_lens is None:
            return None
        return valid_key_mask(valid_lens, num_keys, valid_lens.device)  # BUG: no [:, None]


class TopLeftCausalMask(CausalReference):
    """(h) A causal mask aligned to the top-left corner, as SDPA's ``is_causal``: right in
    one full pass, but once a ``KVCache`` holds earlier keys the query at position t sees
    only the first keys (a one-token step: key 0 alone)."""

    def causal_mask(self, num_queries, num_keys, device):
        rows = torch.arange(num_queries, device=device)[:, None]  # BUG: + num_keys - num_queries
        return torch.arange(num_keys, device=device) <= rows


# Two more correct layouts of the same steps, for tests that must pass every correct module


class HeadAxisAttention(MultiHeadAttention):
    """A head axis from the split to the merge, (batch, len, d) -> (batch, h, len, d/h), and
    ``nn.Linear`` projections."""

    def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False):
        super().__init__(num_hiddens, num_heads, dropout, bias, query_size=num_hiddens,
                         key_size=num_hiddens, value_size=num_hiddens)

    def split(self, X):
        # (batch_size, length, num_heads, head_size) -> (batch_size, num_heads, length, head_size)
        return X.reshape(*X.shape[:2], self.num_heads, -1).transpose(1, 2)

    def merge(self, X):
        # (batch_size, num_heads, length, head_size) -> (batch_size, length, num_hiddens)
        return X.transpose(1, 2).reshape(X.shape[0], X.shape[2], -1)

    def forward(self, queries, keys, values, valid_lens=None):
        Q, K, V = (self.split(W(X)) for W, X in ((self.W_q, queries), (self.W_k, keys),
                                                  (self.W_v, values)))
        return self.W_o(self.merge(self.attend(Q, K, V, valid_lens)))


class LoopAttention(MultiHeadAttention):
    """A loop over the heads, each a slice of the projections' features; lazy W_q, W_k, W_v."""

    def forward(self, queries, keys, values, valid_lens=None):
        Q, K, V = self.W_q(queries), self.W_k(keys), self.W_v(values)
        p, outputs, weights = self.head_size, [], []
        for j in range(self.num_heads):
            # Each: (batch_size, 1, length, head_size), head j on a head axis of its own
            q, k, v = (X[:, None, :, j * p:(j + 1) * p] for X in (Q, K, V))
            outputs.append(self.attend(q, k, v, valid_lens)[:, 0])
            weights.append(self.attention_weights)
        self.attention_weights = torch.cat(weights, dim=1)
        return self.W_o(torch.cat(outputs, dim=-1))


class Entry(NamedTuple):
    bug: type
    reference: type
    symptom: str
    source: str
    caught_by: str  # the function of d2lutil.behaviour that fails on it


CATALOGUE = {
    "no_transpose": Entry(
        NoTransposeHeads, Reference,
        "positions mixed across heads: the output depends on the order of the keys",
        "reczoo/FuxiCTR #30; jsbaan/transformer-from-scratch #4 (fixed by #6)",
        "check_keys_permuted"),
    "scale_by_num_hiddens": Entry(
        ScaleByNumHiddens, Reference,
        "weights too flat (by sqrt(num_heads) in the exponent); no mask or shape shows it",
        "jadore801120/attention-is-all-you-need-pytorch #49; "
        "brightmart/bert_language_understanding #9", "check_matches_torch"),
    "mask_inverted": Entry(
        CausalMaskInverted, CausalReference,
        "each query sees the future and not its past: a later token changes earlier outputs",
        "rasbt/LLMs-from-scratch #1061 (fixed by #1062)", "check_future_ignored"),
    "causal_dropped": Entry(
        DroppedCausalMask, CausalReference,
        "every query sees the future: changing a later token changes earlier outputs",
        "keras-team/keras #23038", "check_future_ignored"),
    "keys_from_queries": Entry(
        KeysFromQueries, Reference,
        "cross-attention never reads the encoder: the output ignores the keys and values",
        "keitakurita/Practical_NLP_in_PyTorch #1 (fixed in c90e740)", "check_matches_torch"),
    "mask_over_queries": Entry(
        MaskOverQueries, Reference,
        "padded keys are attended, padded queries zeroed: the mask laid over the queries",
        "hyunwoongko/transformer #40", "check_padding_ignored"),
    "repeat_not_interleave": Entry(
        RepeatNotInterleave, Reference,
        "head j of sequence i masked with another sequence's lengths",
        "lsdefine/attention-is-all-you-need-keras #36 (the mirror image)",
        "check_padding_ignored"),
    "mask_not_broadcast": Entry(
        MaskNotBroadcastOverHeads, Reference,
        "head j of every sequence masked with sequence j's lengths (batch_size = num_heads)",
        "phlippe/uvadlc_notebooks #67 (a mask of two axes there, which raised)",
        "check_padding_ignored"),
    "causal_top_left": Entry(
        TopLeftCausalMask, CausalReference,
        "step-by-step decoding with a KVCache differs from one causal pass",
        "pytorch/pytorch #103082", "check_cache_matches_full_pass"),
}

#: Correct modules of three layouts: heads folded into the batch, a head axis, a loop.
LAYOUTS = (Reference, HeadAxisAttention, LoopAttention)


# Notebook 10's clinic: three modules to diagnose with tests of one's own, before the
# library's tests are shown. No points; the answers are here, for the instructor.
VERDICTS = ("correct", "keys", "padding", "future", "heads")
_MYSTERIES = {1: (MaskOverQueries, "padding"), 2: (Reference, "correct"),
              3: (DroppedCausalMask, "future")}


def mystery(number):
    """Mystery module ``number`` (1, 2 or 3): a class with the book's interface,
    ``Mystery(num_hiddens, num_heads)``, whose bug, if it has one, its name does not say.
    Mystery 3 is decoder self-attention, meant to be causal."""
    if number not in _MYSTERIES:
        raise ValueError(f"number must be 1, 2 or 3, got {number!r}")
    return type("Mystery", (_MYSTERIES[number][0],), {"__module__": "mystery"})


def diagnose(number, verdict):
    """Print whether ``verdict`` for mystery ``number`` is right: "correct", or the behaviour
    that breaks ("keys", "padding", "future", "heads"); ``...`` while not answered."""
    if verdict is ...:
        print(f"Mystery {number}: not answered yet. Test it, then set verdict.")
    elif verdict not in VERDICTS:
        print(f"Mystery {number}: verdict must be one of " + ", ".join(VERDICTS) + ".")
    elif verdict == _MYSTERIES[number][1]:
        print(f"Mystery {number}: {verdict!r} is right.")
    else:
        print(f"Mystery {number}: {verdict!r} is not it: which behaviour did your test see "
              "break, if any?")
