"""d2lutil.bugs and d2lutil.behaviour: correct modules pass every behaviour test, each bug
of the catalogue passes a shape check and fails the behaviour test named in its entry.

Three correct layouts besides d2lutil's, ``bugs.LAYOUTS``: ``Reference`` (heads folded into
the batch), a head axis and a loop over heads. The behaviour tests compare in float64
(``behaviour.ATOL``, ``behaviour.RTOL``); the modules are built under seed 0.
"""

import functools
import re

import pytest
import torch
from torch import nn

from d2lutil import MultiHeadAttention, bugs, check_shape
from d2lutil import behaviour as B
from d2lutil.bugs import (
    CATALOGUE,
    LAYOUTS,
    CausalReference,
    HeadAxisAttention,
    MaskInverted,
    Reference,
)

CHECKS = [B.check_keys_permuted, B.check_padding_ignored, B.check_heads_independent,
          B.check_matches_torch]
CAUSAL_CHECKS = [B.check_future_ignored, B.check_padding_ignored, B.check_heads_independent,
                 functools.partial(B.check_matches_torch, causal=True),
                 B.check_cache_matches_full_pass]


CORRECT = [MultiHeadAttention, functools.partial(MultiHeadAttention, fused=True), *LAYOUTS]


def check_name(check):
    return check.__name__ if hasattr(check, "__name__") else check.func.__name__


def suite(cls):
    return CAUSAL_CHECKS if issubclass(cls, CausalReference) else CHECKS


@pytest.mark.parametrize("check", CHECKS, ids=check_name)
@pytest.mark.parametrize("factory", CORRECT, ids=lambda f: getattr(f, "__name__", "fused"))
def test_correct_modules_pass(factory, check):
    check(factory)


@pytest.mark.parametrize("valid_lens", [torch.tensor([0, 5]), torch.tensor([[1, 0, 3], [5, 2, 0]])],
                         ids=["per_sequence", "per_query"])
@pytest.mark.parametrize("factory", [*CORRECT, CausalReference],
                         ids=lambda f: getattr(f, "__name__", "fused"))
def test_a_query_with_no_valid_key_gets_zeros_never_nan(factory, valid_lens):
    """The library's rule, kept by every class it calls correct: zero weights, a zero output
    of the attention (W_o's input, so with bias=False the module's too), finite gradients."""
    torch.manual_seed(0)
    module, merged = factory(8, 2), []
    module.W_o.register_forward_pre_hook(lambda layer, args: merged.append(args[0]))
    queries, keys = torch.randn(2, 3, 8, requires_grad=True), torch.randn(2, 5, 8)
    output = module(queries, keys, keys, valid_lens)
    # (batch_size, num_queries): True for a query that may see no key
    empty = (valid_lens if valid_lens.dim() == 2 else valid_lens[:, None].expand(-1, 3)) == 0
    assert (merged[0][empty] == 0).all() and (output[empty] == 0).all()
    if module.attention_weights is not None:  # (batch_size, num_heads, num_queries, num_keys)
        assert (module.attention_weights.transpose(1, 2)[empty] == 0).all()
    output.sum().backward()
    assert all(X.isfinite().all() for X in (output, queries.grad, *(
        p.grad for p in module.parameters())))


@pytest.mark.parametrize("check", CAUSAL_CHECKS, ids=lambda c: check_name(c) + (
    "_causal" if isinstance(c, functools.partial) else ""))
def test_causal_reference_passes(check):
    check(CausalReference)


def test_a_built_module_is_accepted():
    torch.manual_seed(3)
    B.check_matches_torch(MultiHeadAttention(8, 2))


@torch.no_grad()
def test_reference_is_multi_head_attention():
    """Same seed, same weights, same outputs and weights as d2lutil.MultiHeadAttention."""
    queries, keys = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    for valid_lens in (None, torch.tensor([5, 2]), torch.tensor([[1, 2, 3], [5, 0, 4]])):
        models = []
        for cls in (MultiHeadAttention, Reference):
            torch.manual_seed(0)
            models.append(cls(8, 2).eval())
            models[-1].output = models[-1](queries, keys, keys, valid_lens)
        torch.testing.assert_close(models[1].output, models[0].output)
        torch.testing.assert_close(models[1].attention_weights, models[0].attention_weights)


# The behaviour tests each bug fails, with these defaults (seed 0, num_hiddens 8,
# num_heads 2, batch_size 2, 3 queries, 5 keys). keys_from_queries is silent under the
# padding test: its call's arguments are right, so no check raises (the 5 valid lengths
# then cover all 3 "keys"); only the comparison with torch sees it.
FAILS = {
    "no_transpose": {"check_keys_permuted", "check_padding_ignored", "check_heads_independent",
                     "check_matches_torch"},
    "scale_by_num_hiddens": {"check_matches_torch"},
    "mask_inverted": {"check_padding_ignored", "check_future_ignored", "check_matches_torch",
                      "check_cache_matches_full_pass"},
    "causal_dropped": {"check_future_ignored", "check_matches_torch",
                       "check_cache_matches_full_pass"},
    "keys_from_queries": {"check_matches_torch"},
    "mask_over_queries": {"check_padding_ignored", "check_matches_torch"},
    "repeat_not_interleave": {"check_padding_ignored", "check_matches_torch"},
    "mask_not_broadcast": {"check_padding_ignored", "check_matches_torch"},
    # q != k in check_matches_torch, so the top-left corner shows there too
    "causal_top_left": {"check_matches_torch", "check_cache_matches_full_pass"},
}


def test_catalogue_is_complete():
    assert set(CATALOGUE) == set(FAILS)
    for entry in CATALOGUE.values():
        assert entry.symptom and "#" in entry.source
        assert hasattr(B, entry.caught_by), entry.caught_by


@pytest.mark.parametrize("name", list(CATALOGUE))
def test_bug_has_its_reference_weights(name):
    """A bug differs from its reference by the bug alone: same seed, same parameters."""
    entry = CATALOGUE[name]
    X = torch.randn(1, 2, 8)
    modules = []
    for cls in (entry.bug, entry.reference):
        torch.manual_seed(0)
        modules.append(cls(8, 2))
        modules[-1](X, X, X)  # the lazy projections take their weights
    bug, reference = modules
    assert issubclass(entry.bug, entry.reference)
    for (name_b, p_b), (name_r, p_r) in zip(bug.named_parameters(),
                                            reference.named_parameters(), strict=True):
        assert name_b == name_r and torch.equal(p_b, p_r)


@pytest.mark.parametrize("name", list(CATALOGUE))
@torch.no_grad()
def test_bug_passes_a_shape_check(name):
    """batch_size = num_heads = 2, the sizes a learner tries first (mask_not_broadcast
    raises otherwise), valid_lens <= num_queries (keys_from_queries). The output has the
    right shape; so have the weights, except keys_from_queries' when num_queries differs
    from num_keys: its weights are (batch_size, num_heads, num_queries, num_queries)."""
    torch.manual_seed(0)
    bug = CATALOGUE[name].bug(8, 2)
    queries, keys = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    check_shape(bug(queries, keys, keys, torch.tensor([3, 2])), (2, 3, 8))
    check_shape(bug.attention_weights, (2, 2, 3, 3 if name == "keys_from_queries" else 5))


@pytest.mark.parametrize("name", list(CATALOGUE))
def test_which_behaviour_tests_fail(name):
    """Exactly FAILS[name], its catalogue entry's caught_by among them, with a message
    that shows the difference (the references pass every test: test_correct_modules_pass)."""
    entry, failed = CATALOGUE[name], set()
    for check in suite(entry.bug):
        try:
            check(entry.bug)
        except AssertionError as error:
            failed.add(check_name(check))
            assert re.search(r"largest difference|changed heads", str(error)), str(error)
    assert entry.caught_by in failed and failed == FAILS[name]


def test_heads_test_needs_two_heads():
    with pytest.raises(ValueError, match="num_heads must be >= 2"):
        B.check_heads_independent(MultiHeadAttention, num_hiddens=8, num_heads=1)


def test_missing_projection_is_named():
    class Renamed(nn.Module):
        """HeadAxisAttention whose output projection is not called W_o."""

        def __init__(self, num_hiddens, num_heads):
            super().__init__()
            self.inner = HeadAxisAttention(num_hiddens, num_heads)
            self.W_q, self.W_k, self.W_v = self.inner.W_q, self.inner.W_k, self.inner.W_v

        def forward(self, queries, keys, values, valid_lens=None):
            return self.inner(queries, keys, values, valid_lens)

    for check in (B.check_matches_torch, B.check_heads_independent):
        with pytest.raises(AssertionError, match="no W_o"):
            check(Renamed)


def test_grouped_query_attention_has_no_torch_twin():
    with pytest.raises(ValueError, match=r"W_q, W_k, W_v and W_o must have weights of shape"):
        B.check_matches_torch(functools.partial(MultiHeadAttention, num_kv_heads=1))


def test_inverted_causal_mask_sees_the_future():
    """The source of mask_inverted inverted a causal mask: the future-token test catches it."""
    with pytest.raises(AssertionError, match="a query sees the future"):
        B.check_future_ignored(functools.partial(MaskInverted, causal=True))


def test_the_behaviour_tests_leave_the_callers_random_state():
    torch.manual_seed(5)
    before = torch.get_rng_state()
    B.check_keys_permuted(MultiHeadAttention)
    B.check_padding_ignored(MultiHeadAttention)
    assert torch.equal(torch.get_rng_state(), before)


CHECK_OF = {"keys": B.check_keys_permuted, "padding": B.check_padding_ignored,
            "future": B.check_future_ignored, "heads": B.check_heads_independent}


@pytest.mark.parametrize("number", [1, 2, 3])
def test_a_mysterys_one_right_verdict_is_what_the_behaviour_tests_find(number, capsys):
    cls = bugs.mystery(number)
    assert cls.__name__ == "Mystery" and "Mystery" in repr(cls(8, 2))
    for verdict in (..., "mask", *bugs.VERDICTS):
        bugs.diagnose(number, verdict)
    said = capsys.readouterr().out.splitlines()
    assert "not answered yet" in said[0] and "must be one of" in said[1]
    (verdict,) = [v for v, line in zip(bugs.VERDICTS, said[2:], strict=True)
                  if line.endswith("is right.")]
    causal = issubclass(cls, bugs.CausalReference)
    for name, check in CHECK_OF.items():
        if name == ("keys" if causal else "future"):
            continue  # a causal output depends on the order of the keys
        if name == verdict:
            with pytest.raises(AssertionError):
                check(cls)
        else:
            check(cls)
    with pytest.raises(ValueError, match="number must be 1, 2 or 3"):
        bugs.mystery(4)
