"""Which stage of a multi-head attention module first departs from a correct one.

``first_departure(module)`` runs ``module`` and a correct reference (by default
``d2lutil.MultiHeadAttention``) with the same weights, copied by name, on fixed seeded inputs
in float64, and names the first stage that departs. The module needs the book's names,
``W_q``, ``W_k``, ``W_v``, ``W_o`` (layers with a ``weight``) and ``num_heads``, and its
forward, ``forward(queries, keys, values, valid_lens=None)``; any layout will do (heads
folded into the batch, a head axis, a loop over heads; ``nn.Linear`` or ``nn.LazyLinear``).

Observed, by forward hooks on any module: the inputs and outputs of ``W_q``, ``W_k``,
``W_v``, the input of ``W_o`` (the merged heads), the output, and ``attention_weights``
where the module keeps them, (batch_size, num_heads, num_queries, num_keys) or folded,
(batch_size * num_heads, num_queries, num_keys) (weights in another order only show as a
departure when the outputs depart too). Hidden inside a head, localised by
controlled probes, in this order (the first that departs names the stage):

1. no ``valid_lens``: the projections (observed).
2. *which keys each query sees*: changing one key and its value must change the outputs of
   the queries that may see it. A query that sees no key (the reference's sees some) is
   the mask's fault: a wrong split or merge moves what a query sees, but never empties it.
3. equal values (every key has the same value): whatever the scores, mask and softmax,
   head j's output is head j's block of that value, so a departure is in the split or the
   merge; one query decides which (a merge that forgets its transpose is right for one
   query, a wrong split is not). Only head 0's values nonzero shows where head 0 lands.
4. *which keys each query sees* again, now that the heads are right: the mask.
5. ``W_q = 0``: every score is 0, so each query's weights are equal over the keys it sees,
   whatever the scaling: the softmax and its weights.
6. the full ``W_q``: the scores. Rescaling the queries shows the scaling: if the module with
   ``c * W_q`` agrees, it divides the scores by c * sqrt(num_hiddens / num_heads). Else if
   one query agrees, the queries' split mixes their positions.
7. ``valid_lens`` per sequence, then per query: which keys each head sees (read at
   ``W_o``'s input, one changed key at a time), then the values; an error is the mask's.

``STAGES`` lists the stages in the order of the computation; "between X and Y" names hidden
steps no probe tells apart. A causal module is compared with a causal reference (e.g.
``bugs.CausalReference(num_hiddens, num_heads)``); the inputs have fewer queries than keys,
so a causal mask aligned to the wrong corner departs. A ``KVCache`` is not compared.
"""

import contextlib
import copy
import math
import textwrap
from dataclasses import dataclass, field

import torch
from torch import nn

from .attention import MultiHeadAttention

__all__ = ["STAGES", "Departure", "first_departure"]

STAGES = ("projections", "split into heads", "scores", "mask", "softmax/weights",
          "merge of heads", "output projection")
NAMES = ("W_q", "W_k", "W_v", "W_o")
RTOL, ATOL = 1e-7, 1e-9  # float64: equal up to round-off


@dataclass
class Departure:
    """``stage``: one of ``STAGES``, "between X and Y", or None (no departure); ``detail``;
    ``max_difference``: the largest absolute difference of the output in the probe that
    departs (nan if the module raised); ``table``: rows (probe, tensor, largest absolute
    difference, or None where the module does not show the tensor). Printed, a difference
    within float64 round-off (at most ``ATOL``) reads 0."""
    stage: str | None
    detail: str = ""
    max_difference: float = 0.0
    table: list = field(default_factory=list, repr=False)

    def __str__(self):
        lines = (["no departure: the module agrees with the reference at every stage"]
                 if self.stage is None else
                 [f"first departure: {self.stage}",
                  textwrap.fill(self.detail, 79, initial_indent="  ", subsequent_indent="  "),
                  f"  largest difference of the output: {self.max_difference:.3g}"])
        lines.append(f"  {'probe':<26}{'W_q,W_k,W_v':>12}{'weights':>10}{'W_o input':>11}"
                     f"{'output':>9}")
        for probe in dict.fromkeys(row[0] for row in self.table):
            rows = [(name, diff) for p, name, diff in self.table if p == probe]
            projections = [diff for name, diff in rows if name[:3] in NAMES[:3]]
            cells = [None if None in projections else max(projections)] + [
                dict(rows).get(name) for name in ("weights", "W_o input", "output")]
            lines.append(f"  {probe:<26}" + "".join(
                f"{'-' if diff is None else _rounded(diff):>{width}}"
                for diff, width in zip(cells, (12, 10, 11, 9), strict=True)))
        return "\n".join(lines)


def _rounded(diff):
    """A table entry: two significant digits, or 0 for round-off (at most ``ATOL``)."""
    return "0" if diff <= ATOL else f"{diff:.2g}"


def _prepare(module, label, widths=None):
    """A float64 copy in eval mode, its lazy layers materialised by one forward pass."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"{label} must be an nn.Module, got {type(module).__name__}")
    for name in NAMES:
        if not isinstance(getattr(getattr(module, name, None), "weight", None), torch.Tensor):
            raise AttributeError(f"the {label} has no {name} with a weight: the book's names "
                                 "are W_q, W_k, W_v, W_o and num_heads")
    if not isinstance(getattr(module, "num_heads", None), int):
        raise AttributeError(f"the {label} has no num_heads (an int)")
    # a tensor kept from a forward pass with autograd (attention_weights) cannot be copied
    memo = {id(value): value.detach() for layer in module.modules()
            for value in vars(layer).values() if isinstance(value, torch.Tensor)}
    module = copy.deepcopy(module, memo).eval().double()
    if widths is None:  # an input width, or a lazy layer's output width (num_hiddens)
        layers = [getattr(module, name) for name in NAMES[:3]]
        widths = [layer.out_features if isinstance(layer.weight, nn.parameter.
                  UninitializedParameter) else layer.weight.shape[1] for layer in layers]
    with torch.no_grad(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)  # lazy layers draw the same weights every time
        module(*(torch.zeros(1, 2, width, dtype=torch.float64) for width in widths))
    return module, widths


def _copy_weights(module, reference):
    with torch.no_grad():
        for name in NAMES:
            mine, theirs = getattr(module, name), getattr(reference, name)
            if mine.weight.shape != theirs.weight.shape:
                raise ValueError(f"{name}.weight has shape {tuple(mine.weight.shape)} in the "
                                 f"module, {tuple(theirs.weight.shape)} in the reference")
            theirs.weight.copy_(mine.weight)
            bias = getattr(mine, "bias", None)
            if getattr(theirs, "bias", None) is not None:
                theirs.bias.copy_(torch.zeros_like(theirs.bias) if bias is None else bias)
            elif bias is not None:
                raise ValueError(f"the module's {name} has a bias, the reference's has none: "
                                 "build the reference with bias=True")


def _run(module, queries, keys, values, valid_lens=None):
    """The observed tensors of one forward pass, in the order of the computation."""
    seen, hooks = {}, []
    for name in NAMES:
        def hook(layer, args, output, name=name):
            seen[f"{name} input"] = args[0].detach()
            if name != "W_o":
                seen[f"{name} output"] = output.detach()
        hooks.append(getattr(module, name).register_forward_hook(hook))
    if "attention_weights" in vars(module):
        module.attention_weights = None  # no stale weights of an earlier call
    try:
        with torch.no_grad():
            output = module(queries, keys, values, valid_lens)
    finally:
        for hook in hooks:
            hook.remove()
    # (batch_size, num_heads, num_queries, num_keys), unfolding head j of sequence i from
    # row i * num_heads + j of folded weights
    shape = (queries.shape[0], module.num_heads, queries.shape[1], keys.shape[1])
    weights = getattr(module, "attention_weights", None)
    if isinstance(weights, torch.Tensor) and weights.numel() == math.prod(shape):
        seen["weights"] = weights.detach().reshape(shape)
    order = [f"{name} {end}" for name in NAMES[:3] for end in ("input", "output")]
    return {**{name: seen[name] for name in order + ["weights", "W_o input"] if name in seen},
            "output": output}


def _difference(mine, theirs):
    if mine is None:
        return None
    return math.inf if mine.shape != theirs.shape else (mine - theirs).abs().max().item()


def _close(mine, theirs):
    return mine.shape == theirs.shape and torch.allclose(mine, theirs, rtol=RTOL, atol=ATOL)


@contextlib.contextmanager
def _patched(modules, name, scale=1.0, keep=None):
    """Within ``with``: ``name``'s weight (and bias) times ``scale``, and its output
    features outside the slice ``keep`` zero."""
    params = [p for m in modules for p in getattr(m, name).parameters(recurse=False)]
    saved = [p.clone() for p in params]
    with torch.no_grad():
        for p in params:
            p.mul_(scale)
            if keep is not None:
                p[:keep.start], p[keep.stop:] = 0.0, 0.0
    try:
        yield
    finally:
        with torch.no_grad():
            for p, old in zip(params, saved, strict=True):
                p.copy_(old)


def _sees(module, queries, keys, values, valid_lens=None, per_head=False):
    """(batch_size, num_heads or 1, num_queries, num_keys), True where changing that key and
    its value changes the query's output (per head: its block of W_o's input)."""
    target = "W_o input" if per_head else "output"
    base = _run(module, queries, keys, values, valid_lens)[target]
    generator, columns = torch.Generator().manual_seed(99), []
    for k in range(keys.shape[1]):
        new_keys, new_values = keys.clone(), values.clone()
        for X in (new_keys, new_values):
            X[:, k] = torch.randn(X[:, k].shape, generator=generator, dtype=X.dtype)
        change = (_run(module, queries, new_keys, new_values, valid_lens)[target] - base).abs()
        # (batch_size, num_queries, num_heads or 1, head_size or num_hiddens)
        change = change.reshape(*change.shape[:2], module.num_heads if per_head else 1, -1)
        columns.append(change.amax(dim=-1).transpose(1, 2) > 1e-7 * (1 + base.abs().max()))
    return torch.stack(columns, dim=-1)


def _sees_detail(mine, theirs, per_head):
    i, j, t = (mine != theirs).any(dim=-1).nonzero()[0].tolist()
    return ((f"head {j} of " if per_head else "") + f"sequence {i}, query {t} sees keys "
            f"{mine[i, j, t].nonzero().flatten().tolist()}, expected "
            f"{theirs[i, j, t].nonzero().flatten().tolist()}")


def _scale(module, expected, inputs, head_size):
    """What the module divides the scores by, if a rescaled W_q explains the departure."""
    def miss(log_c):
        with _patched([module], "W_q", scale=math.exp(log_c)):
            return (_run(module, *inputs)["output"] - expected).abs().max().item()
    lo = min((k / 8 for k in range(-40, 41)), key=miss) - 1 / 8  # c from exp(-5) to exp(5)
    hi = lo + 2 / 8
    for _ in range(40):  # golden-section search of log c
        a, b = hi - 0.618 * (hi - lo), lo + 0.618 * (hi - lo)
        lo, hi = (lo, b) if miss(a) < miss(b) else (a, hi)
    if miss((lo + hi) / 2) > 1e-6 * (1 + expected.abs().max().item()):
        return None
    return math.exp((lo + hi) / 2) * math.sqrt(head_size)


class _Found(Exception):
    """Carries (stage, detail, max_difference) out of a probe."""


def _split_or_merge(mine, theirs, both, equal, head_size):
    """Stage and detail of a departure with equal values (any weights summing to 1 agree)."""
    weights = mine.get("weights")
    if weights is not None:
        sums = weights.sum(dim=-1)  # (batch_size, num_heads, num_queries)
        wrong = ((sums - 1).abs() > 1e-9) & (sums.abs() > 1e-9)
        if wrong.any():
            return "softmax/weights", f"a query's weights sum to {sums[wrong][0]:.3g}, not 1"
    if "W_o input" in mine and _close(mine["W_o input"], theirs["W_o input"]):
        return "output projection", "W_o's input agrees with the reference's, the output not"
    queries, keys, values, _ = equal
    # one query: a merge that forgets its transpose is right, a wrong split is not
    one = [_run(m, queries[:, -1:], keys, values)["output"] for m in both]
    stage, detail = (("split into heads", "with equal values, one query already departs")
                     if not _close(*one) else ("merge of heads", "with equal values, one "
                     f"query agrees, {queries.shape[1]} do not: the merge mixes positions"))
    module, num_heads = both[0], both[0].num_heads
    with _patched([module], "W_v", keep=slice(0, head_size)):  # one nonzero head
        merged = _run(module, *equal).get("W_o input")
    if merged is not None and merged.shape[-1] == num_heads * head_size:
        # (batch_size, num_queries, num_heads, head_size) -> (num_heads,)
        largest = merged.reshape(*merged.shape[:2], num_heads, -1).abs().amax(dim=(0, 1, 3))
        detail += (f"; with only head 0's values nonzero, heads "
                   f"{(largest > ATOL).nonzero().flatten().tolist()} of W_o's input are "
                   "nonzero, expected [0]")
    return stage, detail


def _scores(first, mine, both, plain, head_size):
    """Stage and detail of a departure with the full W_q, once every other probe agrees."""
    if first == "output":
        return "output projection", "W_o's input agrees with the reference's, the output not"
    if first == "W_o input" and "weights" in mine:
        return ("between softmax/weights and merge of heads",
                "the weights agree, their mixture of the values does not")
    factor = _scale(both[0], _run(both[1], *plain)["output"], plain, head_size)
    if factor is not None:
        return "scores", (f"scaling: divides by {factor:.3g}, expected "
                          f"{math.sqrt(head_size):.3g}")
    queries, keys, values, _ = plain  # one query: a split of the queries cannot mix them
    if _close(*(_run(m, queries[:, -1:], keys, values)["output"] for m in both)):
        return "split into heads", (f"one query agrees, {queries.shape[1]} do not: the "
                                    "queries' positions are mixed when split into heads")
    return ("between split into heads and softmax/weights", "no rescaling of the queries "
            "explains it: the split of the queries or keys, the dot products or the softmax")


def first_departure(module, reference=None, *, batch_size=2, num_queries=3, num_keys=5,
                    seed=0):
    """Compare ``module`` with ``reference`` stage by stage; return a ``Departure``.

    module: an nn.Module with ``W_q``, ``W_k``, ``W_v``, ``W_o``, ``num_heads`` and
    ``forward(queries, keys, values, valid_lens=None)``; a float64 copy is compared, in
    eval mode. reference: a correct module with the same names (e.g.
    ``bugs.CausalReference(...)`` for a causal module), or None for a ``MultiHeadAttention``
    of the module's sizes; the module's weights are copied into a copy of it by name.
    The inputs are drawn with ``seed``; valid_lens are unequal, each at least 1.
    Raises AttributeError naming a missing W_q, W_k, W_v, W_o or num_heads.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # about 50 passes over tiny tensors, where threads only cost
    try:
        with torch.random.fork_rng(devices=[]):  # the caller's random numbers stay as they were
            return _first_departure(module, reference, batch_size, num_queries, num_keys, seed)
    finally:
        torch.set_num_threads(threads)


def _first_departure(module, reference, batch_size, num_queries, num_keys, seed):
    module, widths = _prepare(module, "module")
    num_heads = module.num_heads
    num_hiddens = module.W_q.weight.shape[0]
    head_size = num_hiddens // num_heads
    if reference is None:
        reference = MultiHeadAttention(num_hiddens, num_heads, bias=any(
            getattr(getattr(module, name), "bias", None) is not None for name in NAMES),
            query_size=widths[0], key_size=widths[1], value_size=widths[2])
    reference, _ = _prepare(reference, "reference", widths)
    if reference.num_heads != num_heads:
        raise ValueError(f"reference has num_heads = {reference.num_heads}, the module "
                         f"{num_heads}")
    _copy_weights(module, reference)
    both, table = (module, reference), []
    generator = torch.Generator().manual_seed(seed)
    queries, keys, values = (torch.randn(batch_size, n, width, generator=generator,
                                         dtype=torch.float64) for n, width in
                             zip((num_queries, num_keys, num_keys), widths, strict=True))
    plain = (queries, keys, values, None)
    # (batch_size,) and (batch_size, num_queries): unequal lengths, each at least 1
    lens = num_keys - torch.arange(batch_size) * 3 % num_keys
    per_query = (lens[:, None] - torch.arange(num_queries)).clamp(min=1)

    def observe(probe, inputs):
        """Both runs, their table rows, the first departing tensor; raises _Found when it
        is a projection's."""
        mine, theirs = (_run(m, *inputs) for m in both)
        first = None
        for name, tensor in theirs.items():
            table.append((probe, name, _difference(mine.get(name), tensor)))
            if first is None and name in mine and not _close(mine[name], tensor):
                first = name
        diff = _difference(mine["output"], theirs["output"])
        if first == "weights" and all(_close(mine[name], theirs[name]) for name in
                                      ("W_o input", "output") if name in mine):
            first = None  # weights kept in another layout: they only refine what outputs show
        if first is not None and first[:3] in NAMES[:3]:
            layer, names = first[:3], ("queries", "keys", "values")
            source = next((n for n, X in zip(names, inputs, strict=False)
                           if _close(mine[first], X)), "something else")
            raise _Found("projections", f"{layer}'s output departs, its input agrees"
                         if first.endswith("output") else f"{layer} is applied to the "
                         f"{source}, expected the {names[NAMES.index(layer)]}", diff)
        return first, mine, theirs, diff

    try:
        # 1) the projections; 2) a query that sees no key
        full, full_mine, _, full_diff = observe("no valid_lens", plain)
        sees = [_sees(m, *plain) for m in both]
        if (~sees[0].any(dim=-1) & sees[1].any(dim=-1)).any():
            return Departure("mask", "with no valid_lens, " + _sees_detail(*sees, False),
                             full_diff, table)
        # 3) equal values: the split and the merge
        equal = (queries, keys, values[:, :1].expand_as(values).clone(), None)
        first, mine, theirs, diff = observe("equal values", equal)
        if any(name in mine and not _close(mine[name], theirs[name])
               for name in ("W_o input", "output")):
            return Departure(*_split_or_merge(mine, theirs, both, equal, head_size), diff,
                             table)
        # 4) which keys each query sees: the mask
        if not torch.equal(*sees):
            return Departure("mask", "with no valid_lens, " + _sees_detail(*sees, False),
                             full_diff, table)
        # 5) W_q = 0: equal weights over the keys each query sees
        with _patched(both, "W_q", scale=0.0):
            first, mine, theirs, diff = observe("W_q = 0", plain)
        if first is not None:
            return Departure("softmax/weights" if first == "weights" else
                             "between mask and merge of heads", "with W_q = 0 every score is "
                             "0, so each query's weights must be equal over the keys it sees",
                             diff, table)
        # 6) the full W_q: the scores and their scaling
        if full is not None:
            return Departure(*_scores(full, full_mine, both, plain, head_size), full_diff,
                             table)
        # 7) valid_lens per sequence, then per query: the mask
        for label, valid_lens in (("per sequence", lens), ("per query", per_query)):
            inputs, text = (queries, keys, values, valid_lens), f"valid_lens {label}"
            try:
                first, mine, theirs, diff = observe(text, inputs)
            except _Found:
                raise
            except Exception as error:  # a crash with valid_lens is the mask's
                raise _Found("mask", f"with {text} = {valid_lens.tolist()} the module raised "
                             f"{type(error).__name__}: {error}", math.nan) from None
            per_head = "W_o input" in mine
            sees = [_sees(m, *inputs, per_head=per_head) for m in both]
            if not torch.equal(*sees):
                return Departure("mask", f"with {text} = {valid_lens.tolist()}, "
                                 + _sees_detail(*sees, per_head), diff, table)
            if first is not None:
                return Departure("mask", f"with {text} the keys each query sees agree, but "
                                 f"{first} departs", diff, table)
    except _Found as found:
        return Departure(*found.args, table)
    return Departure(None, table=table)
