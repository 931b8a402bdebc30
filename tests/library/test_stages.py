"""d2lutil.stages: correct modules of every layout show no departure; each bug of
d2lutil.bugs, and a few written here for the stages the catalogue does not reach, is
localised to its stage."""

import functools
import math
import re

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from d2lutil import MultiHeadAttention
from d2lutil.bugs import (
    CATALOGUE,
    CausalReference,
    HeadAxisAttention,
    LoopAttention,
    MaskNotBroadcastOverHeads,
    Reference,
)
from d2lutil.stages import STAGES, Departure, first_departure


class MergeWithoutTranspose(HeadAxisAttention):
    def merge(self, X):
        return X.reshape(X.shape[0], X.shape[2], -1)  # BUG: no transpose(1, 2) first


class SoftmaxOverQueries(HeadAxisAttention):
    def attend(self, queries, keys, values, valid_lens=None):
        scores = queries @ keys.transpose(2, 3) / self.score_scale()
        self.attention_weights = F.softmax(scores, dim=-2)  # BUG: over the queries
        return self.attention_weights @ values


class NoScaling(HeadAxisAttention):
    def score_scale(self):
        return 1.0  # BUG: sqrt(head_size)


class QueriesMixed(HeadAxisAttention):
    def split(self, X):
        if X.shape[1] != 3:  # keys and values: 5 positions
            return super().split(X)
        # BUG: (batch_size, num_heads, num_queries, head_size) by a reshape alone
        return X.reshape(X.shape[0], self.num_heads, X.shape[1], -1)


class KeysReversed(HeadAxisAttention):
    def split(self, X):
        X, self.calls = super().split(X), getattr(self, "calls", 0) + 1
        return X.flip(2) if self.calls % 3 == 2 else X  # BUG: the keys' positions reversed


class Residual(HeadAxisAttention):
    def forward(self, queries, keys, values, valid_lens=None):
        # BUG: a residual belongs to the block, not here
        return super().forward(queries, keys, values, valid_lens) + queries


class FunctionalOutput(HeadAxisAttention):
    """Correct, but W_o is applied with F.linear: no hook sees the merged heads."""

    def forward(self, queries, keys, values, valid_lens=None):
        Q, K, V = (self.split(W(X)) for W, X in ((self.W_q, queries), (self.W_k, keys),
                                                  (self.W_v, values)))
        merged = self.merge(self.attend(Q, K, V, valid_lens))
        return F.linear(merged, self.W_o.weight, self.W_o.bias)


class NoScalingNoWeights(NoScaling):
    """NoScaling keeping no attention_weights: the scale is read from the outputs alone."""

    def forward(self, *args):
        output = super().forward(*args)
        del self.attention_weights
        return output


class HeadsFirstWeights(LoopAttention):
    """Correct, keeping its weights as (num_heads, batch_size, num_queries, num_keys)."""

    def forward(self, *args):
        output = super().forward(*args)
        self.attention_weights = self.attention_weights.transpose(0, 1).contiguous()
        return output


def build(factory, num_hiddens=8, num_heads=2, **kwargs):
    torch.manual_seed(0)
    return factory(num_hiddens, num_heads, **kwargs)


CORRECT = [MultiHeadAttention, functools.partial(MultiHeadAttention, query_size=8, key_size=8,
                                                 value_size=8),
           functools.partial(MultiHeadAttention, fused=True), Reference, HeadAxisAttention,
           LoopAttention, FunctionalOutput, HeadsFirstWeights]


def name_of(factory):
    if isinstance(factory, functools.partial):
        return factory.func.__name__ + "_" + "_".join(map(str, factory.keywords))
    return factory.__name__


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("factory", CORRECT, ids=name_of)
def test_correct_modules_do_not_depart(factory, bias):
    found = first_departure(build(factory, bias=bias))
    assert found.stage is None, str(found)
    assert found.max_difference == 0.0 and str(found).startswith("no departure")


@pytest.mark.parametrize("sizes", [(12, 3), (8, 1), (16, 4)])
def test_other_sizes_do_not_depart(sizes):
    for factory in (MultiHeadAttention, LoopAttention):
        assert first_departure(build(factory, *sizes)).stage is None


def test_causal_reference_does_not_depart():
    assert first_departure(build(CausalReference), build(CausalReference)).stage is None


# The stage of every bug of the catalogue, and what the detail says. The causal bugs are
# compared with their reference, CausalReference; with fewer queries than keys a causal
# mask aligned to the top-left corner (the KV cache bug) departs without a cache.
EXPECTED = {
    "no_transpose": ("split into heads", r"one query already departs.*heads \[0, 1\] of "
                     r"W_o's input are nonzero, expected \[0\]"),
    "scale_by_num_hiddens": ("scores", r"scaling: divides by 2\.83, expected 2$"),
    "mask_inverted": ("mask", r"no valid_lens, sequence 0, query 0 sees keys \[3, 4\], "
                      r"expected \[0, 1, 2\]"),
    "causal_dropped": ("mask", r"no valid_lens, sequence 0, query 0 sees keys "
                       r"\[0, 1, 2, 3, 4\], expected \[0, 1, 2\]"),
    "keys_from_queries": ("projections", r"W_k is applied to the queries, expected the keys"),
    "mask_over_queries": ("mask", r"head 0 of sequence 1, query 0 sees keys \[0, 1, 2, 3, 4\], "
                          r"expected \[0, 1\]"),
    "repeat_not_interleave": ("mask", r"head 1 of sequence 0, query 0 sees keys \[0, 1\], "
                              r"expected \[0, 1, 2, 3, 4\]"),
    "mask_not_broadcast": ("mask", r"head 1 of sequence 0, query 0 sees keys \[0, 1\]"),
    "causal_top_left": ("mask", r"query 0 sees keys \[0\], expected \[0, 1, 2\]"),
}


def test_every_bug_has_an_expected_stage():
    assert set(EXPECTED) == set(CATALOGUE)
    assert {stage for stage, _ in EXPECTED.values()} <= set(STAGES)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("name", list(CATALOGUE))
def test_each_bug_is_localised(name, bias):
    entry = CATALOGUE[name]
    found = first_departure(build(entry.bug, bias=bias), build(entry.reference, bias=bias))
    stage, detail = EXPECTED[name]
    assert found.stage == stage, str(found)
    assert found.max_difference > 1e-3
    assert max(len(line) for line in str(found).splitlines()) <= 79
    assert re.search(detail, found.detail), found.detail


@pytest.mark.parametrize("factory, stage, detail", [
    (MergeWithoutTranspose, "merge of heads", r"one query agrees, 3 do not"),
    (SoftmaxOverQueries, "softmax/weights", r"a query's weights sum to"),
    (NoScaling, "scores", r"divides by 1, expected 2$"),
    (NoScalingNoWeights, "scores", r"divides by 1, expected 2$"),
    (Residual, "output projection", r"W_o's input agrees"),
    (QueriesMixed, "split into heads", r"one query agrees, 3 do not: the queries' positions"),
    (KeysReversed, "between split into heads and softmax/weights", r"no rescaling"),
], ids=["merge", "softmax", "scale", "scale_no_weights", "residual", "queries_mixed",
        "keys_reversed"])
def test_stages_the_catalogue_does_not_reach(factory, stage, detail):
    found = first_departure(build(factory))
    assert found.stage == stage, str(found)
    assert re.search(detail, found.detail), found.detail


def test_a_crash_with_valid_lens_is_the_mask():
    """batch_size 3 != num_heads 2: the mask of MaskNotBroadcastOverHeads does not broadcast."""
    found = first_departure(build(MaskNotBroadcastOverHeads), batch_size=3)
    assert found.stage == "mask" and math.isnan(found.max_difference)
    assert "valid_lens per sequence = [5, 2, 4] the module raised RuntimeError" in found.detail


def test_a_causal_module_needs_a_causal_reference():
    found = first_departure(build(CausalReference))  # compared with a non-causal one
    assert found.stage == "mask" and "expected [0, 1, 2, 3, 4]" in found.detail


def test_missing_names_are_named():
    class NoQuery(HeadAxisAttention):
        def __init__(self, *args):
            super().__init__(*args)
            self.query = self.W_q
            del self.W_q

    with pytest.raises(AttributeError, match="the module has no W_q with a weight"):
        first_departure(build(NoQuery))
    module = build(HeadAxisAttention)
    del module.num_heads
    with pytest.raises(AttributeError, match="the module has no num_heads"):
        first_departure(module)
    with pytest.raises(AttributeError, match="the reference has no W_q"):
        first_departure(build(HeadAxisAttention), nn.Linear(8, 8))
    with pytest.raises(TypeError, match="module must be an nn.Module, got type"):
        first_departure(HeadAxisAttention)


def test_mismatched_reference_is_refused():
    with pytest.raises(ValueError, match="reference has num_heads = 4, the module 2"):
        first_departure(build(HeadAxisAttention), build(Reference, 8, 4))
    with pytest.raises(ValueError, match="build the reference with bias=True"):
        first_departure(build(HeadAxisAttention, bias=True), build(Reference))
    with pytest.raises(ValueError, match=r"W_k.weight has shape \(4, 8\) in the module"):
        first_departure(build(MultiHeadAttention, num_kv_heads=1, key_size=8, value_size=8))


def test_deterministic_and_the_module_unchanged():
    module = build(LoopAttention)  # lazy: its copy takes the same weights every time
    runs = [first_departure(module, build(MaskNotBroadcastOverHeads)) for _ in range(2)]
    assert runs[0] == runs[1] and runs[0].table == runs[1].table
    assert isinstance(module.W_q.weight, nn.parameter.UninitializedParameter)
    bug = build(CATALOGUE["scale_by_num_hiddens"].bug)
    bug(torch.randn(1, 2, 8), torch.randn(1, 2, 8), torch.randn(1, 2, 8))
    before = {name: p.clone() for name, p in bug.named_parameters()}
    first_departure(bug)
    assert all(torch.equal(p, before[name]) for name, p in bug.named_parameters())
    assert next(bug.parameters()).dtype == torch.float32
    threads, state = torch.get_num_threads(), torch.random.get_rng_state()
    first_departure(bug)  # builds a MultiHeadAttention, without drawing the caller's numbers
    assert torch.get_num_threads() == threads
    assert torch.equal(torch.random.get_rng_state(), state)


def test_the_report_a_student_reads():
    found = first_departure(build(CATALOGUE["scale_by_num_hiddens"].bug))
    assert isinstance(found, Departure)
    text = str(found).splitlines()
    assert text[:2] == ["first departure: scores", "  scaling: divides by 2.83, expected 2"]
    assert str(found).startswith(f"first departure: {found.stage}\n  {found.detail}")
    assert text[3].split() == ["probe", "W_q,W_k,W_v", "weights", "W_o", "input", "output"]
    assert [line.split()[0] for line in text[4:]] == ["no", "equal", "W_q"]
    assert max(len(line) for line in text) <= 79
    assert "-" in str(first_departure(build(FunctionalOutput))).splitlines()[-1]
