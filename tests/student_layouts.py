"""Correct multi-head attention written as a student would, in three layouts, each step a
method a test can replace: what notebook 10's exercise 2 must accept (tests/exercises and
course/tests/test_codec.py). A subclass with ``causal = "top-left"`` or ``"bottom-right"``
masks the future too, as a student's variant asks."""

import math

import torch
from torch import nn
from torch.nn import functional as F


class HeadAxis(nn.Module):
    """A student's class: a head axis from the split to the merge, each step a method."""

    causal = "no"

    def __init__(self, num_hiddens, num_heads, dropout=0.0, bias=False):
        super().__init__()
        self.num_heads, self.dropout = num_heads, nn.Dropout(dropout)
        self.W_q, self.W_k, self.W_v, self.W_o = (self.linear(num_hiddens, bias)
                                                  for _ in range(4))

    def linear(self, num_hiddens, bias):
        return nn.LazyLinear(num_hiddens, bias=bias)

    def project(self, queries, keys, values):
        return self.W_q(queries), self.W_k(keys), self.W_v(values)

    def split(self, X):  # (b, n, d) -> (b, h, n, d / h)
        return X.reshape(*X.shape[:2], self.num_heads, -1).transpose(1, 2)

    def merge(self, X):  # (b, h, n, d / h) -> (b, n, d)
        return X.transpose(1, 2).reshape(X.shape[0], X.shape[2], -1)

    def scale(self, head_size):
        return math.sqrt(head_size)

    def mask(self, valid_lens, num_keys):  # (b, 1, 1 or n, m), True = may attend
        lens = valid_lens[:, None] if valid_lens.dim() == 1 else valid_lens
        return (torch.arange(num_keys) < lens[..., None])[:, None]

    def future(self, num_queries, num_keys):  # (n, m), True = a key the query may not see
        last = torch.arange(num_queries)[:, None] + (
            0 if self.causal == "top-left" else num_keys - num_queries)
        return torch.arange(num_keys) > last

    def softmax(self, scores):
        return F.softmax(scores, dim=-1)

    def drop(self, weights):
        return self.dropout(weights)

    def forward(self, queries, keys, values, valid_lens=None):
        Q, K, V = (self.split(X) for X in self.project(queries, keys, values))
        scores = Q @ K.transpose(2, 3) / self.scale(Q.shape[-1])
        if valid_lens is not None:
            scores = scores.masked_fill(~self.mask(valid_lens, K.shape[2]), -1e9)
        if self.causal != "no":
            scores = scores.masked_fill(self.future(*scores.shape[-2:]), -1e9)
        return self.W_o(self.merge(self.drop(self.softmax(scores)) @ V))


class Folded(HeadAxis):
    """The book's layout: heads folded into the batch, the lengths repeated per head."""

    def forward(self, queries, keys, values, valid_lens=None):
        Q, K, V = (self.split(X).flatten(0, 1) for X in self.project(queries, keys, values))
        scores = Q @ K.transpose(1, 2) / math.sqrt(Q.shape[-1])  # (b * h, n, m)
        if valid_lens is not None:
            lens = torch.repeat_interleave(valid_lens, self.num_heads, dim=0)
            lens = lens[:, None] if lens.dim() == 1 else lens
            scores = scores.masked_fill(torch.arange(K.shape[1]) >= lens[..., None], -1e9)
        if self.causal != "no":
            scores = scores.masked_fill(self.future(*scores.shape[-2:]), -1e9)
        out = self.drop(F.softmax(scores, dim=-1)) @ V
        return self.W_o(self.merge(out.unflatten(0, (-1, self.num_heads))))


class Loop(HeadAxis):
    """A loop over the heads, each through F.scaled_dot_product_attention (allowed)."""

    def forward(self, queries, keys, values, valid_lens=None):
        Q, K, V = self.project(queries, keys, values)
        p = Q.shape[-1] // self.num_heads
        mask = None if valid_lens is None else self.mask(valid_lens, K.shape[1])[:, 0]
        if self.causal != "no":
            seen = ~self.future(Q.shape[1], K.shape[1])
            mask = seen if mask is None else mask & seen
        heads = [F.scaled_dot_product_attention(
            *(X[..., j * p:(j + 1) * p] for X in (Q, K, V)), attn_mask=mask,
            dropout_p=self.dropout.p if self.training else 0.0) for j in range(self.num_heads)]
        return self.W_o(torch.cat(heads, dim=-1))
