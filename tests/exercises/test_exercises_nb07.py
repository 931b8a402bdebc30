"""Notebook 07's exercises: what tests/exercises/test_exercises_declared.py cannot say.

``ANSWERS``: every variant's right answers by another route (least squares on random heads,
FlopCounterMode around a real prefill and real steps, the bytes of a cache's tensors), for
tests/exercises/test_exercise_variants.py. Here: the hints give the method, not the answers.
The book's answers, and typical slips: notebooks/solutions/07_solutions.ipynb.
"""

import re

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

import d2lutil
from d2lutil import tasks
from d2lutil.cost import attention_flops
from d2lutil.exercises.nb07 import ex1, ex2, ex3


def giveaways(exercise, i):
    """What a hint of variant ``i`` must not say: its answers, and for exercise 1 the
    ranks and the last step of the formula."""
    values, answer = exercise.variants[i], exercise.built(i)[0][-1][1].expected
    if exercise is ex1:
        h, d_x = values["h"], values["d_x"]
        ranks = [min(g * min(h // g, 2) * values["num_hiddens"] // h, 2 * d_x)
                 for g in values["g"]]
        return ([f"{f:g}" for f in answer if f] + [", ".join(map(str, ranks)),
                                                   f"1 - R/{2 * d_x}"])
    if exercise is ex2:
        return [str(answer), f"{answer:,}"]
    return [f"{n:g}" for n in answer] + ["4096 * 2", f"{values['tokens']} * 2"]


@pytest.mark.parametrize("exercise, i", [(exercise, i) for exercise in (ex1, ex2, ex3)
                                         for i in range(len(exercise.variants))])
def test_the_hints_give_the_method_not_the_answer(exercise, i):
    for hint in exercise.built(i)[1]:
        for text in giveaways(exercise, i):
            assert not re.search(rf"(?<![\d.]){re.escape(text)}(?![\d.])", hint), (
                f"{exercise.name}, variant {i}: a hint gives away {text!r}")


def heads_output(pair, weights, W_v, num_kv_heads):
    """The solutions' heads: pair (N, 2, d_x), weights (h, 2), W_v (g p, d_x) -> (N, h p)."""
    num_heads, head_size = weights.shape[0], W_v.shape[0] // num_kv_heads
    outputs = []
    for i in range(num_heads):
        r = i // (num_heads // num_kv_heads)  # the key/value head of query head i
        projected = pair @ W_v[r * head_size:(r + 1) * head_size].T  # (N, 2, p)
        outputs.append(weights[i, 0] * projected[:, 0] + weights[i, 1] * projected[:, 1])
    return torch.cat(outputs, dim=1)


def floors_by_least_squares(h, num_hiddens, d_x, g, seed=0):
    """{g: held-out error of the best linear readout} on fixed random weights, as the
    solutions compute it: within the check's 0.01 of every floor, which are 1/(2 d_x)
    apart, so it passes only where the module's floors are right."""
    p = num_hiddens // h
    generator = torch.Generator().manual_seed(seed)
    pair = torch.randn(8_000, 2, d_x, generator=generator, dtype=torch.float64)
    targets = pair.reshape(-1, 2 * d_x)
    fitted = {}
    for k in g:
        weights = torch.softmax(torch.randn(h, 2, generator=generator,
                                            dtype=torch.float64), dim=1)
        W_v = torch.randn(k * p, d_x, generator=generator, dtype=torch.float64)
        features = heads_output(pair, weights, W_v, k)
        W = tasks.fit_readout(features[:4_000], targets[:4_000])
        fitted[k] = tasks.relative_squared_error(features[4_000:] @ W, targets[4_000:])
    return fitted


def prefill_extra(prompt, num_hiddens, batch_size):
    """FLOPs of a prefill of ``prompt`` tokens minus those of as many one-token steps,
    counted by FlopCounterMode on the small decode's layer at the variant's sizes (that
    both give the causal pass, tests/library/test_kv_cache.py checks)."""
    torch.manual_seed(0)
    layer = d2lutil.MultiHeadAttention(
        num_hiddens, 8, query_size=num_hiddens, key_size=num_hiddens,
        value_size=num_hiddens, num_kv_heads=2).eval()
    X = torch.randn(batch_size, prompt, num_hiddens)
    causal_lens = torch.arange(1, prompt + 1).expand(batch_size, -1)

    def counted(*args, **kwargs):
        counter = FlopCounterMode(display=False)
        with torch.no_grad(), counter:
            layer(*args, **kwargs)
        return counter.get_total_flops()

    prefill_flops = counted(X, X, X, causal_lens, cache=d2lutil.KVCache())
    cache = d2lutil.KVCache()
    step_flops = sum(counted(X[:, t:t + 1], X[:, t:t + 1], X[:, t:t + 1], cache=cache)
                     for t in range(prompt))
    assert prefill_flops > step_flops  # "more": the open-book part
    return prefill_flops - step_flops


def sequences_that_fit(gib, tokens, g):
    """{g: whole sequences whose caches fit}: the bytes of one sequence's cache read off
    16-bit tensors of keys and values (on the meta device: nothing is allocated), one pair
    per layer of a Llama 2 7B-shaped model."""
    fits = {}
    for k in g:
        keys = torch.empty(1, k, tokens, 128, dtype=torch.float16, device="meta")
        per_layer = 2 * keys.numel() * keys.element_size()  # keys and values
        fits[k] = gib * 2**30 // (32 * per_layer)
    return fits


# d2lutil calls whose result a student might hand in (test_exercises_understanding.py):
# the closed-form FLOPs of the prefill's attention (all of it, and its scores and mixing)
LIBRARY_CALLS = {ex2: [
    lambda prompt, num_hiddens, batch_size: attention_flops(
        prompt, num_hiddens, batch_size=batch_size).total,
    lambda prompt, num_hiddens, batch_size: (lambda f: f.scores + f.mixing)(
        attention_flops(prompt, num_hiddens, batch_size=batch_size))]}

ANSWERS = {ex1: lambda **values: (floors_by_least_squares(**values),),  # see
           ex2: lambda **values: ("more", prefill_extra(**values)),  # test_exercise_
           ex3: lambda **values: (sequences_that_fit(**values),)}  # variants.py
