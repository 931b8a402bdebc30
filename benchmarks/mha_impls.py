"""The multi-head attention implementations that `make bench` compares, on shared weights.

Every implementation is built from the same four (num_hiddens, num_hiddens) matrices
W_q, W_k, W_v, W_o (no biases), so all of them compute the same function and their
outputs and gradients can be checked against each other before anything is timed.

``IMPLS`` lists the names in the order of every table. ``build(name, ...)`` returns an
``Impl``: the module and a ``forward(queries, keys, values, valid_lens=None)`` callable
returning the output (batch_size, num_queries, num_hiddens); ``valid_lens`` of shape
(batch_size,) becomes torch's ``key_padding_mask``.
"""

import math
from dataclasses import dataclass

import torch
from torch import nn

import d2lutil
from d2lutil.bugs import LoopAttention
from d2lutil.masks import valid_lens_to_key_padding

#: Reference of every ratio: torch's own module without weights.
REFERENCE = "torch need_weights=False"
IMPLS = (
    "d2lutil fused",
    "d2lutil weights kept",
    "d2l",
    REFERENCE,
    "torch need_weights=True",
    "loop over heads",
)


def shared_weights(num_hiddens, seed=0):
    """Four (num_hiddens, num_hiddens) float32 matrices W_q, W_k, W_v, W_o, seeded."""
    gen = torch.Generator().manual_seed(seed)
    scale = 1.0 / math.sqrt(num_hiddens)
    return [torch.randn(num_hiddens, num_hiddens, generator=gen) * scale for _ in range(4)]


@dataclass
class Impl:
    name: str
    module: nn.Module
    forward: object  # callable (queries, keys, values, valid_lens=None) -> output


def _load_d2l_style(module, W):
    with torch.no_grad():
        for linear, w in zip((module.W_q, module.W_k, module.W_v, module.W_o), W, strict=True):
            linear.weight.copy_(w)


def build(name, num_hiddens, num_heads, seed=0):
    """The implementation ``name`` with the seeded shared weights, in eval mode."""
    W = shared_weights(num_hiddens, seed)
    d, h = num_hiddens, num_heads
    if name in ("d2lutil fused", "d2lutil weights kept", "d2l", "loop over heads"):
        if name == "d2l":
            from d2l import torch as d2l  # ~7 s to import: only when asked for

            module = d2l.MultiHeadAttention(d, h, dropout=0.0)
        elif name == "loop over heads":
            module = LoopAttention(d, h)
        else:
            module = d2lutil.MultiHeadAttention(d, h, fused=name == "d2lutil fused",
                                                query_size=d, key_size=d, value_size=d)
        with torch.no_grad():  # materialise the LazyLinear layers
            module(*[torch.zeros(1, 1, d)] * 3, None)
        _load_d2l_style(module, W)

        def forward(queries, keys, values, valid_lens=None):
            return module(queries, keys, values, valid_lens)
    elif name in (REFERENCE, "torch need_weights=True"):
        module = nn.MultiheadAttention(d, h, bias=False, batch_first=True)
        with torch.no_grad():
            module.in_proj_weight.copy_(torch.cat(W[:3]))
            module.out_proj.weight.copy_(W[3])
        need_weights = name != REFERENCE

        def forward(queries, keys, values, valid_lens=None):
            # average_attn_weights=False: per-head weights, as d2lutil and d2l keep them
            padding = None if valid_lens is None else valid_lens_to_key_padding(
                valid_lens, keys.shape[1])
            return module(queries, keys, values, need_weights=need_weights,
                          average_attn_weights=False, key_padding_mask=padding)[0]
    else:
        raise ValueError(f"unknown implementation {name!r}; choose from {IMPLS}")
    return Impl(name, module.eval(), forward)


def attention_weights(impl, queries, keys, values):
    """Per-head weights (batch_size, num_heads, q, k) of one forward, or None if not kept."""
    with torch.no_grad():
        if impl.name == "torch need_weights=True":
            return impl.module(queries, keys, values, need_weights=True,
                               average_attn_weights=False)[1]
        impl.forward(queries, keys, values)
    module = impl.module
    if impl.name in ("d2lutil weights kept", "loop over heads"):
        return module.attention_weights
    if impl.name == "d2l":
        w = module.attention.attention_weights
        return w.reshape(queries.shape[0], -1, *w.shape[1:])
    return None


def forward_backward(impl, x, grad_output, valid_lens=None):
    """One forward and backward pass of self-attention on ``x``.

    Returns the output and the gradients with respect to ``x`` and each parameter
    (``torch.autograd.grad``, so nothing accumulates in ``.grad`` between calls).
    ``valid_lens`` (batch_size,): each sequence's number of valid keys, or None.
    """
    output = impl.forward(x, x, x) if valid_lens is None else impl.forward(x, x, x, valid_lens)
    params = [p for p in impl.module.parameters() if p.requires_grad]
    grads = torch.autograd.grad(output, [x, *params], grad_output)
    return output, grads


def check_agreement(impls, batch_size, length, num_hiddens, seed=0, rtol=1e-4, atol=1e-5):
    """Check all ``impls`` agree with the first one on a seeded self-attention input.

    Compares outputs, gradients with respect to the input, and the kept attention
    weights. Returns a dict name -> largest absolute difference found (over the three);
    raises AssertionError naming the implementation and quantity that disagrees.
    """
    gen = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(batch_size, length, num_hiddens, generator=gen)
    grad_output = torch.randn(batch_size, length, num_hiddens, generator=gen)
    results = {}
    for impl in impls:
        impl.module.train()
        xg = x.clone().requires_grad_()
        output, grads = forward_backward(impl, xg, grad_output)
        impl.module.eval()
        results[impl.name] = (output.detach(), grads[0], attention_weights(impl, x, x, x))
    ref_name = impls[0].name
    ref_out, ref_grad, _ = results[ref_name]
    ref_weights = next((w for _, _, w in results.values() if w is not None), None)
    diffs = {}
    for name, (out, grad, weights) in results.items():
        pairs = [("output", out, ref_out), ("input gradient", grad, ref_grad)]
        if weights is not None:
            pairs.append(("attention weights", weights, ref_weights))
        worst = 0.0
        for what, a, b in pairs:
            if a.shape != b.shape or not torch.allclose(a, b, rtol=rtol, atol=atol):
                err = (a - b).abs().max().item() if a.shape == b.shape else "shape"
                raise AssertionError(
                    f"{name} disagrees with {ref_name} on the {what}: max abs diff {err}")
            worst = max(worst, (a - b).abs().max().item())
        diffs[name] = worst
    return diffs
