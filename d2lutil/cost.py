"""What a module costs: parameters, floating-point operations and wall time.

* ``count_parameters(module)``: the number of scalar parameters;
* ``count_flops(module, *args, **kwargs)``: the FLOPs that
  ``torch.utils.flop_counter.FlopCounterMode`` counts for one call, in total
  and per ATen operator;
* ``attention_flops(num_queries, num_hiddens, ...)``: the closed form
  ``8 n d^2 + 4 n^2 d`` of multi-head self-attention (and its cross-attention
  generalization), split into projections, scores and mixing;
* ``time_forward_backward(module, *args, ...)``: median forward and backward
  times measured with ``torch.utils.benchmark``.

A FLOP here is what the counter calls one: a multiply-add of a matrix product
counts as 2. The counter only knows matrix products and convolutions, so
softmax, scaling and masking cost nothing in its eyes.
"""

import logging
from typing import NamedTuple

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from .shapes import check_positive_int

__all__ = [
    "FlopCount",
    "AttentionFlops",
    "Timing",
    "count_parameters",
    "count_flops",
    "attention_flops",
    "time_forward_backward",
]


def _require_callable(module):
    if not callable(module):
        raise TypeError(
            f"module must be a torch.nn.Module or another callable, got {type(module).__name__}"
        )


def count_parameters(module, trainable_only=False):
    """The number of scalar parameters of ``module`` (an ``nn.Module``).

    With ``trainable_only`` only parameters with ``requires_grad`` count.
    Raises ``ValueError`` if a lazy layer (``nn.LazyLinear``) has not yet
    seen an input, since its parameters do not exist yet.
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    total = 0
    for name, param in module.named_parameters():
        if isinstance(param, nn.parameter.UninitializedParameter):
            raise ValueError(
                f"module has an uninitialized lazy parameter {name!r}: "
                "call the module once on an input before counting its parameters"
            )
        if param.requires_grad or not trainable_only:
            total += param.numel()
    return total


class FlopCount(NamedTuple):
    """FLOPs of one call: ``total`` and ``by_operator`` ({'aten.mm': ..., ...})."""

    total: int
    by_operator: dict


def count_flops(module, *args, **kwargs):
    """Count the FLOPs of ``module(*args, **kwargs)`` with ``FlopCounterMode``.

    ``module`` is an ``nn.Module`` or any callable; the call runs once, under
    ``torch.no_grad()`` (a forward pass, nothing is trained). Returns a
    ``FlopCount`` whose ``by_operator`` maps ATen operator names such as
    ``'aten.mm'`` and ``'aten.bmm'`` to their FLOPs, sorted by name; operators
    the counter does not know (softmax, division, masking) are absent. A
    matrix product of shapes (n, k) @ (k, m) counts 2 n k m FLOPs.
    """
    _require_callable(module)
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        module(*args, **kwargs)
    by_operator = {str(op): int(flops)
                   for op, flops in counter.get_flop_counts().get("Global", {}).items()}
    by_operator = dict(sorted(by_operator.items()))
    return FlopCount(int(counter.get_total_flops()), by_operator)


class AttentionFlops(NamedTuple):
    """The closed-form FLOPs of multi-head attention, by stage."""

    projections: int  # W_q, W_k, W_v and W_o
    scores: int  # queries @ keys^T, all heads
    mixing: int  # weights @ values, all heads

    @property
    def total(self):
        return self.projections + self.scores + self.mixing


def attention_flops(num_queries, num_hiddens, num_keys=None, batch_size=1):
    """FLOPs of multi-head attention whose four projections are d x d, d = num_hiddens.

    With n = num_queries and m = num_keys (default: n, self-attention), the
    projections cost 2 n d^2 (queries) + 2 * 2 m d^2 (keys, values) +
    2 n d^2 (output), and scores and mixing cost 2 n m d each: for n = m,
    ``8 n d^2 + 4 n^2 d`` in all, whatever the number of heads (the heads
    split d, they do not multiply it). Everything is multiplied by
    ``batch_size``. Biases, softmax, scaling and masking are not counted.
    Returns an ``AttentionFlops`` (``.total`` is the sum).
    """
    if num_keys is None:
        num_keys = num_queries
    for name, value in (("num_queries", num_queries), ("num_hiddens", num_hiddens),
                        ("num_keys", num_keys), ("batch_size", batch_size)):
        check_positive_int(name, value)
    n, m, d, b = num_queries, num_keys, num_hiddens, batch_size
    return AttentionFlops(projections=b * (4 * n * d * d + 4 * m * d * d),
                          scores=b * 2 * n * m * d, mixing=b * 2 * n * m * d)


class Timing(NamedTuple):
    """Median wall times in seconds of one forward and one backward pass."""

    forward: float
    backward: float


def _benchmark_timer():
    """``torch.utils.benchmark.Timer``, imported lazily.

    Importing ``torch.utils.benchmark`` imports ``torch.utils.cpp_extension``,
    which logs "No CUDA runtime is found" on machines that have a CUDA toolkit
    but no GPU; that message is irrelevant here and would land on stderr.
    """
    logger = logging.getLogger("torch.utils.cpp_extension")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        from torch.utils.benchmark import Timer
    finally:
        logger.setLevel(level)
    return Timer


def time_forward_backward(module, *args, min_run_time=0.2, num_threads=None):
    """Median forward and backward times of ``module(*args)`` with ``torch.utils.benchmark``.

    ``module`` is an ``nn.Module`` or a callable returning a tensor that
    depends on something with ``requires_grad``. The forward pass is timed
    with autograd recording (as in training); the backward pass is timed
    alone, on one recorded graph, with a gradient of ones. Each is repeated
    for at least ``min_run_time`` seconds and the median is returned, in
    seconds, as a ``Timing``. ``num_threads`` defaults to
    ``torch.get_num_threads()`` (``Timer`` itself would use 1). Gradients the
    parameters had before the call are restored afterwards.
    """
    _require_callable(module)
    if isinstance(min_run_time, bool) or not isinstance(min_run_time, (int, float)):
        raise TypeError(f"min_run_time must be a positive number of seconds, got "
                        f"{type(min_run_time).__name__}")
    if not min_run_time > 0:
        raise ValueError(f"min_run_time must be a positive number of seconds, got {min_run_time!r}")
    if num_threads is None:
        num_threads = torch.get_num_threads()
    check_positive_int("num_threads", num_threads)
    output = module(*args)
    if not isinstance(output, torch.Tensor) or not output.requires_grad:
        raise ValueError("module(*args) must return a tensor that requires grad, so that "
                         "there is a backward pass to time")
    params = list(module.parameters()) if isinstance(module, nn.Module) else []
    saved_grads = [p.grad for p in params]
    grad = torch.ones_like(output)
    Timer = _benchmark_timer()
    try:
        for p in params:  # backward then accumulates into fresh tensors, not the saved ones
            p.grad = None
        forward = Timer("module(*args)", globals={"module": module, "args": args},
                        num_threads=num_threads).blocked_autorange(min_run_time=min_run_time)
        backward = Timer("output.backward(grad, retain_graph=True)",
                         globals={"output": output, "grad": grad},
                         num_threads=num_threads).blocked_autorange(min_run_time=min_run_time)
    finally:
        for p, g in zip(params, saved_grads, strict=True):
            p.grad = g
    return Timing(forward=float(forward.median), backward=float(backward.median))
