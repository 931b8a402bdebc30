"""Smoke tests of benchmarks/: the implementations and the decodes agree, the report code
works. Tiny sizes; timing rounds only with a tiny min_run_time, to check the machinery."""

import pathlib
import sys

import nbformat
import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))

import decode  # noqa: E402
import memory  # noqa: E402
import mha_impls  # noqa: E402
import notebook_times  # noqa: E402
import report  # noqa: E402

# d2l is left out: importing it takes seconds; run.py checks it at every benchmarked shape.
FAST_IMPLS = [n for n in mha_impls.IMPLS if n != "d2l"]


@pytest.mark.parametrize("num_heads", [1, 4])
def test_implementations_agree(num_heads):
    impls = [mha_impls.build(name, 16, num_heads, seed=3) for name in FAST_IMPLS]
    diffs = mha_impls.check_agreement(impls, batch_size=2, length=5, num_hiddens=16, seed=3)
    assert set(diffs) == set(FAST_IMPLS)
    assert max(diffs.values()) < 1e-5


def test_agreement_check_catches_a_wrong_weight():
    impls = [mha_impls.build(name, 16, 4) for name in (mha_impls.REFERENCE, "loop over heads")]
    with torch.no_grad():
        impls[1].module.W_v.weight[0, 0] += 0.5
    with pytest.raises(AssertionError, match="loop over heads"):
        mha_impls.check_agreement(impls, batch_size=2, length=5, num_hiddens=16)


def test_forward_backward_leaves_no_accumulated_grads():
    impl = mha_impls.build("d2lutil fused", 16, 4)
    x = torch.randn(2, 5, 16, requires_grad=True)
    output, grads = mha_impls.forward_backward(impl, x, torch.ones(2, 5, 16))
    assert output.shape == (2, 5, 16)
    assert len(grads) == 1 + len(list(impl.module.parameters()))
    assert all(p.grad is None for p in impl.module.parameters()) and x.grad is None


def test_summarize_takes_the_median_of_per_round_ratios():
    # The reference drifts (machine load); the other is always 2x the same round's time.
    ref = [1.0, 3.0, 2.0, 10.0]
    times = {mha_impls.REFERENCE: ref, "d2lutil fused": [2 * t for t in ref]}
    summary = report.summarize(times)
    assert summary["d2lutil fused"]["ratio"] == pytest.approx(2.0)
    assert summary[mha_impls.REFERENCE]["ratio"] == pytest.approx(1.0)
    assert summary["d2lutil fused"]["median_s"] == pytest.approx(5.0)
    assert summary["d2lutil fused"]["max_s"] == pytest.approx(20.0)


def fake_results(fused_factor):
    names = FAST_IMPLS
    factors = {n: 1.0 + 0.5 * i for i, n in enumerate(names)}
    factors[mha_impls.REFERENCE], factors["d2lutil fused"] = 1.0, fused_factor
    shapes = [[32, 128, 256, 8], [8, 512, 256, 8], [32, 128, 256, 1]]
    timing = [{"shape": shape, "mode": mode,
               "times": {n: [f * 0.01 * (r + 1) for r in range(3)] for n, f in factors.items()}}
              for shape in shapes for mode in ("forward", "forward+backward")]
    runs = {n: [{"rss_peak_mib": 10.0 * factors[n], "tensor_peak_mib": 8.0 * factors[n]}]
            for n in names}
    return {
        "meta": {"date": "today", "nproc": 2, "cpu": "cpu", "torch": torch.__version__,
                 "threads": 2, "rounds": 3, "min_run_time": 0.1},
        "timing": timing,
        "paired": [{"shape": [32, 128, 256, 8], "threads": 2, "mode": "forward+backward",
                    "times": {"d2lutil fused": [fused_factor * 0.1] * 4,
                              mha_impls.REFERENCE: [0.1] * 4,
                              "loop over heads": [0.3] * 4}}],
        "memory": {"shape": [1, 2048, 256, 8], "repeats": 1, "runs": runs},
        "memory_masked": {"shape": [1, 2048, 256, 8], "repeats": 1, "masked": True,
                          "runs": {n: runs[n] for n in report.MASKED_IMPLS}},
        "notebooks": [{"notebook": "01_x.ipynb", "kernel_start_s": 1.0, "imports_s": 2.0,
                       "work_s": 3.0, "total_s": 6.0, "slowest_cells": [{"cell": 4,
                                                                        "seconds": 2.5}]},
                      {"notebook": "02_y.ipynb", "error": "CellExecutionError: boom"}],
        "agreement": {"(32, 128, 256, 8)": {n: 1e-7 for n in names}},
    }


@pytest.mark.parametrize("fused_factor", [0.9, 1.5])
def test_markdown_report(fused_factor):
    text = report.markdown(fake_results(fused_factor))
    verdict = "met" if fused_factor <= report.SPEED_TARGET else "MISSED"
    target_lines = [line for line in text.splitlines() if "target <= 1.05" in line]
    assert len(target_lines) == 2 and all(line.endswith(f"**{verdict}**")
                                          for line in target_lines)
    assert f"x{fused_factor:.2f}" in target_lines[0]
    # Every table row has as many cells as its header.
    for table in text.split("\n\n"):
        rows = [line for line in table.splitlines() if line.startswith("|")]
        if rows:
            assert len({row.count("|") for row in rows}) == 1, table
    assert "| (8, 512, 256, 8) |" in text
    assert "01_x.ipynb | 1.0 | 2.0 | 3.0 | 6.0 | 12.0 | 15 | yes |" in text
    assert "| all |" not in text  # no chapter total when a notebook failed
    assert "failed: CellExecutionError: boom" in text
    assert "With padding" in text and "the same with valid_lens" in text
    loop_lines = [line for line in text.splitlines() if line.startswith("- loop over heads")]
    assert len(loop_lines) == 2 and "x3.00 torch's time" in loop_lines[1]


def test_notebook_table_converts_to_a_2_core_avx2_cpu_and_holds_each_to_its_budget():
    notebooks = [{"notebook": f"{n}_x.ipynb", "kernel_start_s": 0.5, "imports_s": 2.0,
                  "work_s": total - 2.5, "total_s": total, "slowest_cells": []}
                 for n, total in (("01", 7.5), ("08", 13.0))]
    rows = report.notebook_table(notebooks, ratio=2.0).splitlines()
    assert rows[2].startswith("| 01_x.ipynb |") and "| 7.5 | 15.0 | 15 | yes |" in rows[2]
    assert "| 13.0 | 26.0 | 25 | **no** |" in rows[3]  # notebook 8's budget is 25 s
    assert rows[4].startswith("| all |") and "| 20.5 | 41.0 | 110 | yes |" in rows[4]
    assert "| 20.5 | 61.5 | 110 | yes |" in report.notebook_table(notebooks, ratio=3.0)
    assert "(x3), s" in report.notebook_table(notebooks, ratio=3.0).splitlines()[0]


def test_median_run_is_the_run_of_median_total():
    runs = [{"total_s": t} for t in (9.0, 7.0, 8.0, 30.0)]
    assert notebook_times.median_run(runs) == {"total_s": 8.0}
    assert notebook_times.median_run(runs[:3]) == {"total_s": 8.0}


def test_time_notebook_runs_its_kernel_under_the_emulation(tmp_path, monkeypatch):
    """The kernel gets EMULATION's variables (the conversion to a 2-core AVX2 CPU assumes
    them), and only when asked: without env it inherits this process's environment."""
    checks = "\n".join(f"assert os.environ.get({k!r}) == {v!r}, {k!r}"
                        for k, v in notebook_times.EMULATION.items())
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import os\n" + checks)])
    path = tmp_path / "notebooks" / "01_x.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    result = notebook_times.time_notebook(path, env=notebook_times.EMULATION)
    assert result["import_lines"] == ["import os"] and result["notebook"] == "01_x.ipynb"
    assert result["total_s"] >= result["work_s"] > 0
    for key in notebook_times.EMULATION:
        monkeypatch.delenv(key, raising=False)
    with pytest.raises(Exception, match="ATEN_CPU_CAPABILITY|OMP_NUM_THREADS|MKL"):
        notebook_times.time_notebook(path)


def test_notebook_times_names_a_bad_count_or_ratio(capsys):
    for argv in (["--runs", "0"], ["--ratio", "-1"]):
        with pytest.raises(SystemExit):
            notebook_times.main(argv)
        assert "--runs must be at least 1 and --ratio positive" in capsys.readouterr().err


def test_plot_writes_a_png(tmp_path):
    path = tmp_path / "bench.png"
    report.plot(fake_results(1.0), path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_import_statements_collects_top_level_imports_only():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("import nothing"),
        nbformat.v4.new_code_cell("import torch\nfrom torch import nn\nx = 1"),
        nbformat.v4.new_code_cell("%timeit 1"),
        nbformat.v4.new_code_cell("%matplotlib inline\nimport numpy as np"),
        nbformat.v4.new_code_cell("def f():\n    import json\nimport torch\nimport math as m"),
    ]
    assert notebook_times.import_statements(nb) == [
        "import torch", "from torch import nn", "import numpy as np", "import math as m"]


def test_tensor_peak_sees_a_transient_allocation():
    def transient():
        a = torch.ones(1024, 1024)  # 4 MiB, freed before the 2 MiB one is made
        del a
        b = torch.ones(512, 1024)
        del b

    peak = memory.tensor_peak_bytes(transient)
    assert 4 * 2**20 <= peak < 6 * 2**20


def test_valid_lens_agree_with_torchs_padding_mask():
    names = ["d2lutil fused", "d2lutil weights kept", mha_impls.REFERENCE, "loop over heads"]
    impls = [mha_impls.build(name, 16, 4) for name in names]
    x = torch.randn(3, 6, 16)
    valid_lens = torch.tensor([6, 1, 4])
    outputs = [impl.forward(x, x, x, valid_lens) for impl in impls]
    for output in outputs[1:]:
        torch.testing.assert_close(output, outputs[0], rtol=1e-4, atol=1e-5)
    # The mask matters: without it the padded sequences' outputs differ.
    assert not torch.allclose(impls[0].forward(x, x, x), outputs[0], atol=1e-3)


def test_summary_quotes_the_targets_and_notebooks():
    results = fake_results(0.9)
    results["meta"]["load_per_round"] = [1.0, 2.5]
    text = report.summary(results)
    assert text.count("**met**") == 3 and "MISSED" not in text
    assert "01: 1.0 + 2.0 + 3.0 = 6.0 s" in text and "Failed: 02_y.ipynb." in text
    assert "after each round: 1.0, 2.5" in text


# --- benchmarks/decode.py -------------------------------------------------------------------

TINY = {"num_hiddens": 16, "num_heads": 4, "batch_size": 2, "num_tokens": 5}


@pytest.mark.parametrize("num_kv_heads", [1, 2, 4])
def test_both_decodes_equal_one_causal_pass(num_kv_heads):
    model = decode.build(16, 4, num_kv_heads)
    largest, cache = decode.check(model, decode.tokens(2, 5, 16))
    assert largest < 1e-5
    assert cache.keys.shape == cache.values.shape == (2, num_kv_heads, 5, 4)
    assert decode.cache_bytes(cache) == decode.formula_bytes(2, 5, num_kv_heads, 4, 4) == (
        2 * 2 * 5 * num_kv_heads * 4 * 4)


def test_the_decode_check_compares_with_the_causal_pass_and_can_fail(monkeypatch):
    model, X = decode.build(16, 4, 2), decode.tokens(2, 5, 16)
    with torch.no_grad():
        full = model(X, X, X)  # without the causal mask: differs but at the last token
    with_cache, _ = decode.decode_with_cache(model, X)
    assert (with_cache - full).abs().max() > 1e-3
    torch.testing.assert_close(with_cache[:, -1], full[:, -1], rtol=1e-5, atol=1e-6)
    monkeypatch.setattr(decode, "decode_without_cache", lambda model, X: torch.zeros(2, 5, 16))
    with pytest.raises(AssertionError, match="causal forward pass"):
        decode.check(model, X)


def run_tiny(**kwargs):
    options = {"kv_heads": (1, 4), "max_rounds": 1, "min_rounds": 1, "min_run_time": 1e-3,
               "threads": 1, "log": lambda message: None, **kwargs}
    return decode.run(TINY, **options)


def test_the_decode_run_measures_every_configuration_and_is_reported():
    results = run_tiny()
    assert results["rounds"] == 1 and results["config"] == TINY
    assert [e["num_kv_heads"] for e in results["entries"]] == [1, 4]
    for entry in results["entries"]:
        assert entry["cache_bytes"] == entry["formula_bytes"]
        assert all(len(times) == 1 for times in entry["seconds"].values())
        assert all(rate > 0 for rate in entry["tokens_per_s"].values())
    meta = {"date": "today", "nproc": 2, "cpu": "cpu", "torch": torch.__version__,
            "threads": 1, "rounds": 1, "min_run_time": 0.1}
    text = report.markdown({"meta": meta, "decode": results})
    assert "## Decoding with and without a KV cache" in text
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert len(rows) == 2 + 2 and len({row.count("|") for row in rows}) == 1
    assert "| 1 |" in rows[2] and "| 4 |" in rows[3]
    line = [part for part in report.summary({"meta": meta, "decode": results}).split("\n")
            if "Decoding" in part]
    assert len(line) == 1 and "1 kv head:" in line[0] and "4 kv heads" in line[0]


def test_decode_rounds_stop_at_the_budget_but_not_before_the_minimum():
    assert run_tiny(max_rounds=5, min_rounds=2, budget_s=0.0)["rounds"] == 2
    assert run_tiny(max_rounds=3, min_rounds=1, budget_s=1e9)["rounds"] == 3
