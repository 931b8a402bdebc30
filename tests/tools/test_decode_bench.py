"""Smoke tests of benchmarks/decode.py: the decodes agree, the bytes and the report add up.

Tiny sizes; the timing rounds run with a tiny min_run_time only to check the machinery.
"""

import pathlib
import sys

import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))

import decode  # noqa: E402
import report  # noqa: E402

TINY = {"num_hiddens": 16, "num_heads": 4, "batch_size": 2, "num_tokens": 5}


@pytest.mark.parametrize("num_kv_heads", [1, 2, 4])
def test_both_decodes_equal_one_causal_pass(num_kv_heads):
    model = decode.build(16, 4, num_kv_heads)
    X = decode.tokens(2, 5, 16)
    largest, cache = decode.check(model, X)
    assert largest < 1e-5
    assert cache.keys.shape == cache.values.shape == (2, num_kv_heads, 5, 4)
    assert decode.cache_bytes(cache) == decode.formula_bytes(2, 5, num_kv_heads, 4, 4)
    assert decode.cache_bytes(cache) == 2 * 2 * 5 * num_kv_heads * 4 * 4


def test_the_decodes_differ_from_a_pass_without_the_causal_mask():
    # The check compares with a causal pass: the same layer without the mask differs.
    model, X = decode.build(16, 4, 2), decode.tokens(2, 5, 16)
    with torch.no_grad():
        full = model(X, X, X)
    with_cache, _ = decode.decode_with_cache(model, X)
    assert (with_cache - full).abs().max() > 1e-3
    torch.testing.assert_close(with_cache[:, -1], full[:, -1], rtol=1e-5, atol=1e-6)


def test_check_catches_a_wrong_decode(monkeypatch):
    model, X = decode.build(16, 4, 2), decode.tokens(2, 5, 16)
    monkeypatch.setattr(decode, "decode_without_cache", lambda model, X: torch.zeros(2, 5, 16))
    with pytest.raises(AssertionError, match="causal forward pass"):
        decode.check(model, X)


def test_formula_bytes_of_the_benchmarked_configuration():
    # d = 256, h = 8: head size 32; batch 8, 256 tokens, float32
    assert decode.formula_bytes(8, 256, 8, 32, 4) == 4 * 2**20
    assert decode.formula_bytes(8, 256, 1, 32, 4) == 2**19


def run_tiny(**kwargs):
    options = {"kv_heads": (1, 4), "max_rounds": 1, "min_rounds": 1, "min_run_time": 1e-3,
               "threads": 1, "log": lambda message: None}
    options.update(kwargs)
    return decode.run(TINY, **options)


def test_run_measures_every_configuration():
    results = run_tiny()
    assert results["rounds"] == 1 and results["config"] == TINY
    assert [e["num_kv_heads"] for e in results["entries"]] == [1, 4]
    for entry in results["entries"]:
        assert entry["cache_bytes"] == entry["formula_bytes"]
        assert all(len(times) == 1 for times in entry["seconds"].values())
        assert all(rate > 0 for rate in entry["tokens_per_s"].values())


def test_rounds_stop_at_the_budget_but_not_before_the_minimum():
    assert run_tiny(max_rounds=5, min_rounds=2, budget_s=0.0)["rounds"] == 2
    assert run_tiny(max_rounds=3, min_rounds=1, budget_s=1e9)["rounds"] == 3


def test_report_includes_the_decode_table_and_summary_line():
    results = {"meta": {"date": "today", "nproc": 2, "cpu": "cpu", "torch": torch.__version__,
                        "threads": 1, "rounds": 1, "min_run_time": 0.1},
               "decode": run_tiny()}
    text = report.markdown(results)
    assert "## Decoding with and without a KV cache" in text
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert len(rows) == 2 + 2 and len({row.count("|") for row in rows}) == 1
    assert "| 1 |" in rows[2] and "| 4 |" in rows[3]
    line = [part for part in report.summary(results).split("\n") if "Decoding" in part]
    assert len(line) == 1 and "1 kv head:" in line[0] and "4 kv heads" in line[0]
