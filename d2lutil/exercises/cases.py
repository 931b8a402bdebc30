"""Public case builders of function answers, which the student edition ships (no answers
in it).

A function part whose cases are modules (not plain numbers) builds them here, from a few
plain values, so the student's kernel and the grader build the same ones: each case keeps
how it was built as ``built_by`` = (builder name, its arguments).
"""

import torch

from ..attention import MultiHeadAttention

__all__ = ["RefusingAttention", "refusing_attention"]


class RefusingAttention(MultiHeadAttention):
    """A MultiHeadAttention whose forward pass raises: an answer must predict its output
    from its parameters (notebook 4, exercise 3)."""

    def forward(self, *args, **kwargs):
        raise RuntimeError("this module refuses a forward pass: predict its output from "
                           "its parameters")


def refusing_attention(num_hiddens, num_heads, seed):
    """A RefusingAttention(num_hiddens, num_heads, bias=True) with inputs of width
    num_hiddens, its weights drawn from ``seed`` without touching the caller's random
    state."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        attention = RefusingAttention(num_hiddens, num_heads, bias=True,
                                      query_size=num_hiddens, key_size=num_hiddens,
                                      value_size=num_hiddens)
    attention.built_by = ("refusing_attention", (num_hiddens, num_heads, seed))
    return attention
