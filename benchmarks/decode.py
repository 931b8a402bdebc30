"""Decoding token by token, with and without a KV cache: tokens per second and cache bytes.

    python benchmarks/decode.py                 # d 256, h 8, batch 8, 256 tokens; kv heads 1, 2, 8
    python benchmarks/decode.py --quick         # 64 tokens, fewer rounds, to iterate

`make bench` runs it through run.py (skip it there with ``--skip decode``).

One causal self-attention layer, ``d2lutil.MultiHeadAttention(d, h, num_kv_heads=g,
fused=True)``, steps through a fixed (teacher-forced) sequence of ``num_tokens`` random
token vectors, one token per step for every sequence of the batch:

* **with a cache**: each step projects the new token only, appends its key and value to a
  ``d2lutil.KVCache`` and lets the new query attend over everything cached;
* **without a cache**: each step projects the keys and values of the whole prefix again
  and lets the new query attend over them, so the work of step t grows with t and the
  whole decode with the square of its length.

Before timing, both decodes are checked against one causal forward pass of the whole
sequence. A figure is the time of one whole decode (every step, a fresh cache each time),
measured with ``torch.utils.benchmark.Timer.blocked_autorange`` (which runs the statement
once to warm up, then at least once more) on one thread (``--threads``; see ``THREADS``);
tokens per second are
``batch_size * num_tokens / seconds``. The configurations are measured side by side in
interleaved rounds (order rotated each round); a round is started only while the time
budget lasts, so the slow decodes without a cache cannot make the run unbounded. The
report gives the median over rounds and the fastest round, and the speed-up as the median
of per-round ratios (both decodes of a ratio measured seconds apart). The cache's bytes
are read from its tensors after a decode and printed beside
``2 * batch * length * num_kv_heads * head_size * bytes``.
"""

import argparse
import json
import logging
import pathlib
import statistics
import sys
import time

# torch.utils.benchmark imports cpp_extension, which warns about CUDA on a CPU machine.
logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)

import torch  # noqa: E402
from torch.utils import benchmark  # noqa: E402

import d2lutil  # noqa: E402

#: The issue's configuration and the quick one.
FULL = {"num_hiddens": 256, "num_heads": 8, "batch_size": 8, "num_tokens": 256}
QUICK = {"num_hiddens": 256, "num_heads": 8, "batch_size": 8, "num_tokens": 64}
KV_HEADS = (1, 2, 8)
MODES = ("cache", "no cache")
#: A decoding step is a few small products (one token per sequence). With two threads on a
#: shared machine every step waits at thread barriers: measured here, the same decode then
#: ranged over x20 between rounds, against x2 with one thread.
THREADS = 1


def build(num_hiddens, num_heads, num_kv_heads, seed=0):
    """The layer under test, seeded, eval mode, fused kernel (no weights kept)."""
    torch.manual_seed(seed)
    return d2lutil.MultiHeadAttention(
        num_hiddens, num_heads, fused=True, query_size=num_hiddens, key_size=num_hiddens,
        value_size=num_hiddens, num_kv_heads=num_kv_heads).eval()


def tokens(batch_size, num_tokens, num_hiddens, seed=0):
    """The teacher-forced input sequence, (batch_size, num_tokens, num_hiddens)."""
    generator = torch.Generator().manual_seed(seed + 1)
    return torch.randn(batch_size, num_tokens, num_hiddens, generator=generator)


def decode_with_cache(model, X):
    """Step through X one token at a time with a fresh KV cache; (outputs, cache)."""
    cache = d2lutil.KVCache()
    outputs = []
    with torch.no_grad():
        for t in range(X.shape[1]):
            x = X[:, t:t + 1]  # (batch_size, 1, num_hiddens): the new token
            outputs.append(model(x, x, x, cache=cache))
    return torch.cat(outputs, dim=1), cache


def decode_without_cache(model, X):
    """Step through X one token at a time, re-projecting the whole prefix at every step."""
    outputs = []
    with torch.no_grad():
        for t in range(X.shape[1]):
            prefix = X[:, :t + 1]  # (batch_size, t + 1, num_hiddens): every token so far
            outputs.append(model(X[:, t:t + 1], prefix, prefix))
    return torch.cat(outputs, dim=1)


def causal_forward(model, X):
    """One causal forward pass over the whole sequence: query t sees keys 0..t."""
    batch_size, num_tokens, _ = X.shape
    # (batch_size, num_tokens): query t may attend to the first t + 1 keys
    valid_lens = torch.arange(1, num_tokens + 1).expand(batch_size, -1)
    with torch.no_grad():
        return model(X, X, X, valid_lens)


def cache_bytes(cache):
    """Bytes held by the cache's key and value tensors."""
    return sum(t.numel() * t.element_size() for t in (cache.keys, cache.values))


def formula_bytes(batch_size, num_tokens, num_kv_heads, head_size, element_size):
    """2 (keys and values) * batch * length * num_kv_heads * head_size * bytes per number."""
    return 2 * batch_size * num_tokens * num_kv_heads * head_size * element_size


def check(model, X, atol=1e-5):
    """Both decodes equal one causal forward pass; returns (largest difference, cache)."""
    expected = causal_forward(model, X)
    with_cache, cache = decode_with_cache(model, X)
    without = decode_without_cache(model, X)
    diffs = [(out - expected).abs().max().item() for out in (with_cache, without)]
    if max(diffs) > atol:
        raise AssertionError(f"decoding disagrees with the causal forward pass: largest "
                             f"difference {max(diffs):.1e} (with cache {diffs[0]:.1e}, without "
                             f"{diffs[1]:.1e}), tolerance {atol}")
    return max(diffs), cache


def run(config=None, kv_heads=KV_HEADS, max_rounds=5, min_rounds=2, budget_s=120.0,
        min_run_time=0.1, threads=None, log=print):
    """Measure every (num_kv_heads, mode) in interleaved rounds; return a JSON-able dict.

    Rounds continue up to ``max_rounds`` while less than ``budget_s`` seconds have passed
    since the first one started, and always at least ``min_rounds``.
    """
    config = dict(FULL if config is None else config)
    threads = threads or THREADS
    d, h = config["num_hiddens"], config["num_heads"]
    b, T = config["batch_size"], config["num_tokens"]
    X = tokens(b, T, d)
    models, entries = {}, []
    for g in kv_heads:
        model = build(d, h, g)
        largest, cache = check(model, X)
        models[g] = model
        head_size = d // h
        entries.append({
            "num_kv_heads": g, "largest_difference": largest,
            "cache_shape": list(cache.keys.shape), "cache_bytes": cache_bytes(cache),
            "formula_bytes": formula_bytes(b, T, g, head_size, cache.keys.element_size()),
            "seconds": {mode: [] for mode in MODES}})
        log(f"decode: checked num_kv_heads = {g} against a causal forward pass "
            f"(largest difference {largest:.1e})")
    statements = {"cache": lambda model: (lambda: decode_with_cache(model, X)),
                  "no cache": lambda model: (lambda: decode_without_cache(model, X))}
    pairs = [(entry, mode) for entry in entries for mode in MODES]
    start = time.perf_counter()
    rounds = 0
    while rounds < max_rounds and (rounds < min_rounds
                                   or time.perf_counter() - start < budget_s):
        order = pairs[rounds % len(pairs):] + pairs[:rounds % len(pairs)]
        for entry, mode in order:
            fn = statements[mode](models[entry["num_kv_heads"]])
            timer = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=threads)
            entry["seconds"][mode].append(timer.blocked_autorange(min_run_time=min_run_time).median)
        rounds += 1
        log(f"decode: round {rounds} done ({time.perf_counter() - start:.0f} s)")
    for entry in entries:
        entry["tokens_per_s"] = {mode: b * T / statistics.median(times)
                                 for mode, times in entry["seconds"].items()}
    return {"config": config, "threads": threads, "rounds": rounds,
            "min_run_time": min_run_time, "entries": entries}


def _bytes(n):
    return f"{n / 2**20:.2f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"


def speedup(entry):
    """Median over rounds of (time without a cache) / (time with one), both of one round."""
    return statistics.median(plain / cached for cached, plain in
                             zip(entry["seconds"]["cache"], entry["seconds"]["no cache"],
                                 strict=True))


def table(results):
    """The Markdown table of one run."""
    b, T = results["config"]["batch_size"], results["config"]["num_tokens"]
    lines = ["| kv heads | tokens/s with a cache: median (best round) | without a cache | "
             "speed-up (median of per-round ratios) | cache bytes | formula |",
             "|---|---|---|---|---|---|"]
    for e in results["entries"]:
        rates = [f"{e['tokens_per_s'][m]:,.0f} ({b * T / min(e['seconds'][m]):,.0f})"
                 for m in MODES]
        lines.append(
            f"| {e['num_kv_heads']} | {rates[0]} | {rates[1]} | x{speedup(e):.1f} | "
            f"{e['cache_bytes']:,} ({_bytes(e['cache_bytes'])}) | {e['formula_bytes']:,} |")
    return "\n".join(lines)


def describe(results):
    """One sentence: what was run."""
    c = results["config"]
    return (f"One causal self-attention layer (`d2lutil.MultiHeadAttention`, fused, d = "
            f"{c['num_hiddens']}, h = {c['num_heads']}), batch {c['batch_size']}, "
            f"{c['num_tokens']} teacher-forced tokens per decode, {results['threads']} "
            f"thread(s); median of {results['rounds']} interleaved rounds "
            f"(`blocked_autorange(min_run_time={results['min_run_time']})`); tokens/s = batch "
            f"* tokens / seconds per decode, the median over rounds and, in brackets, the "
            f"fastest round (closest to an idle machine). Cache bytes are read from the "
            f"cache's tensors (float32) after a decode; the formula is 2 * batch * length * "
            f"kv heads * head size * 4.")


def markdown(results):
    """The report's section on decoding."""
    return "\n".join(["## Decoding with and without a KV cache", "", describe(results), "",
                      table(results), ""])


def summary_line(results):
    """One line for summary.md."""
    c = results["config"]
    parts = []
    for e in results["entries"]:
        heads = f"{e['num_kv_heads']} kv head" + ("s" if e["num_kv_heads"] > 1 else "")
        parts.append(f"{heads}: {e['tokens_per_s']['cache']:,.0f} "
                     f"tokens/s with a cache, {e['tokens_per_s']['no cache']:,.0f} without "
                     f"(x{speedup(e):.1f}), cache {_bytes(e['cache_bytes'])}")
    return (f"Decoding {c['num_tokens']} tokens at (batch {c['batch_size']}, d "
            f"{c['num_hiddens']}, h {c['num_heads']}): " + "; ".join(parts) + ".")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="64 tokens, at most 3 rounds")
    parser.add_argument("--rounds", type=int, default=None, help="most interleaved rounds")
    parser.add_argument("--budget", type=float, default=120.0,
                        help="seconds after which no new round starts (at least 2 rounds)")
    parser.add_argument("--threads", type=int, default=THREADS)
    parser.add_argument("--json", type=pathlib.Path, default=None, help="also write the results")
    args = parser.parse_args(argv)
    results = run(QUICK if args.quick else FULL, max_rounds=args.rounds or (3 if args.quick else 5),
                  budget_s=args.budget, threads=args.threads)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print()
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
