"""Summaries, the Markdown report and the figure of `make bench`, from its raw results.

Timing entries hold, per implementation, one median per interleaved round (seconds).
A ratio is taken within each round (implementation / reference, both measured seconds
apart) and the median of those per-round ratios is reported, which cancels most of the
slow drift of a shared machine's load.
"""

import statistics

import book
import decode
from mha_impls import IMPLS, REFERENCE

#: Each notebook's budget, seconds, is in its own metadata (``budget_s``, book.budgets;
#: issues 23 and 34): the *total* of ``benchmarks/notebook_times.py`` (fresh kernel: start,
#: imports, own work) on the CPU that Colab's free runtime and many student laptops give, a
#: 2-core AVX2 machine. This is the chapter's in all.
CHAPTER_BUDGET_S = 110
#: Seconds on a 2-core AVX2 CPU per second measured on an AVX-512 machine under the AVX2
#: emulation (``ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 OMP_NUM_THREADS=1``,
#: which ``notebook_times.py`` sets). The emulation caps the instruction set, not the clock:
#: issue 34 measured the chapter 1.98 times slower on a real 2-core AVX2 machine (173.3 s
#: against 87.6 s). The rule: multiply by 2, or by the ratio measured the same way on your
#: own machine if it is larger (``notebook_times.py --ratio``).
COLAB_RATIO = 2.0
HEADLINE_SHAPE = [32, 128, 256, 8]
SPEED_TARGET, MEMORY_TARGET = 1.05, 1.1
#: The implementations of the paired headline comparison.
PAIRED_IMPLS = ("d2lutil fused", REFERENCE, "loop over heads")
#: The implementations whose memory is also measured with padding (valid_lens).
MASKED_IMPLS = ("d2lutil fused", "d2lutil weights kept", REFERENCE)


def summarize(times, reference=REFERENCE):
    """Per name: median seconds, min and max over rounds, median per-round ratio."""
    ref = times[reference]
    out = {}
    for name, values in times.items():
        ratios = [v / r for v, r in zip(values, ref, strict=True)]
        out[name] = {
            "median_s": statistics.median(values),
            "min_s": min(values),
            "max_s": max(values),
            "ratio": statistics.median(ratios),
            "ratio_min": min(ratios),
            "ratio_max": max(ratios),
        }
    return out


def shape_label(shape):
    return "({}, {}, {}, {})".format(*shape)


def _ms(seconds):
    ms = seconds * 1e3
    return f"{ms:.3g}" if ms < 100 else f"{ms:.0f}"


def timing_table(entries, mode):
    names = [n for n in IMPLS if any(n in e["times"] for e in entries)]
    lines = [
        "| (batch, length, d, h) | " + " | ".join(names) + " | reference spread |",
        "|---" * (len(names) + 2) + "|",
    ]
    for entry in (e for e in entries if e["mode"] == mode):
        summary = summarize(entry["times"])
        cells = []
        for name in names:
            s = summary.get(name)
            cells.append("" if s is None else f"{_ms(s['median_s'])} ms (x{s['ratio']:.2f})")
        ref = summary[REFERENCE]
        spread = f"{_ms(ref['min_s'])} to {_ms(ref['max_s'])} ms"
        lines.append(f"| {shape_label(entry['shape'])} | " + " | ".join(cells) + f" | {spread} |")
    return "\n".join(lines)


def memory_summary(memory):
    """Per name: median RSS peak increase and tensor peak (MiB) over the repeats."""
    out = {}
    for name, runs in memory["runs"].items():
        rss = [r["rss_peak_mib"] for r in runs if r.get("rss_peak_mib") is not None]
        out[name] = {
            "rss_mib": statistics.median(rss) if rss else None,
            "rss_min": min(rss) if rss else None,
            "rss_max": max(rss) if rss else None,
            "tensor_mib": statistics.median(r["tensor_peak_mib"] for r in runs),
        }
    return out


def memory_table(memory):
    summary = memory_summary(memory)
    ref = summary.get(REFERENCE, {})
    lines = [
        "| implementation | RSS peak increase, MiB (range) | x torch | "
        "tensor peak, MiB | x torch |",
        "|---|---|---|---|---|",
    ]
    for name in (n for n in IMPLS if n in summary):
        s = summary[name]
        if s["rss_mib"] is None:
            rss, rss_ratio = "n/a", ""
        else:
            rss = f"{s['rss_mib']:.1f} ({s['rss_min']:.1f} to {s['rss_max']:.1f})"
            rss_ratio = f"{s['rss_mib'] / ref['rss_mib']:.2f}" if ref.get("rss_mib") else ""
        t_ratio = f"{s['tensor_mib'] / ref['tensor_mib']:.2f}" if ref.get("tensor_mib") else ""
        lines.append(f"| {name} | {rss} | {rss_ratio} | {s['tensor_mib']:.1f} | {t_ratio} |")
    return "\n".join(lines)


def within(seconds, budget):
    """The mark of a converted figure against its budget."""
    return "yes" if seconds <= budget else "**no**"


def notebook_table(notebooks, ratio=COLAB_RATIO):
    """Markdown: each notebook's phases here, its total times ``ratio`` (a 2-core AVX2
    CPU's), its budget and whether it is within; then the chapter's row."""
    budgets = book.budgets()
    lines = [
        "| notebook | kernel start, s | imports, s | own work, s | total here, s | "
        f"2-core AVX2 (x{ratio:g}), s | budget, s | within | slowest cells (index: s) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for nb in notebooks:
        if "error" in nb:
            lines.append(f"| {nb['notebook']} | failed: {nb['error']} | | | | | | | |")
            continue
        budget = budgets.get(book.number(nb["notebook"]))
        converted = nb["total_s"] * ratio
        mark = "" if budget is None else within(converted, budget)
        slow = ", ".join(f"{c['cell']}: {c['seconds']:.1f}" for c in nb["slowest_cells"])
        lines.append(
            f"| {nb['notebook']} | {nb['kernel_start_s']:.1f} | {nb['imports_s']:.1f} | "
            f"{nb['work_s']:.1f} | {nb['total_s']:.1f} | {converted:.1f} | "
            f"{'' if budget is None else budget} | {mark} | {slow} |")
    timed = [nb for nb in notebooks if "error" not in nb]
    if timed and len(timed) == len(notebooks):
        total = sum(nb["total_s"] for nb in timed)
        lines.append(f"| all | | | | {total:.1f} | {total * ratio:.1f} | {CHAPTER_BUDGET_S} | "
                     f"{within(total * ratio, CHAPTER_BUDGET_S)} | |")
    return "\n".join(lines)


def paired_table(paired):
    names = [n for n in IMPLS if n in paired[0]["times"]]
    lines = [
        "| threads | rounds | " + " | ".join(
            f"{n}: ms, ratio median (quartiles)" for n in names) + " |",
        "|---" * (len(names) + 2) + "|",
    ]
    for entry in paired:
        ref = entry["times"][REFERENCE]
        cells = []
        for name in names:
            values = entry["times"][name]
            ratios = [a / b for a, b in zip(values, ref, strict=True)]
            q1, _, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
            cells.append(f"{_ms(statistics.median(values))}, x{statistics.median(ratios):.3f} "
                         f"({q1:.2f} to {q3:.2f})")
        lines.append(f"| {entry['threads']} | {len(ref)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def find_entry(entries, shape, mode):
    return next((e for e in entries if e["shape"] == shape and e["mode"] == mode), None)


def speed_headline(shape, s, measured):
    """The speed target at ``shape`` as (text, met), from d2lutil fused's summary ``s``
    (its time over torch's); ``measured`` says how it was measured and what it came to."""
    return (f"d2lutil fused / torch need_weights=False, forward+backward at "
            f"{shape_label(shape)}{measured}; target <= {SPEED_TARGET}",
            s["ratio"] <= SPEED_TARGET)


def headlines(results):
    """The issue's targets as (text, met) pairs; met is None where not measured."""
    out = []
    entry = find_entry(results.get("timing", []), HEADLINE_SHAPE, "forward+backward")
    if entry and "d2lutil fused" in entry["times"]:
        s = summarize(entry["times"])["d2lutil fused"]
        out.append(speed_headline(HEADLINE_SHAPE, s, (
            f": x{s['ratio']:.2f} (median of per-round ratios; "
            f"rounds {s['ratio_min']:.2f} to {s['ratio_max']:.2f})")))
    for paired in results.get("paired", []):
        s = summarize(paired["times"])["d2lutil fused"]
        out.append(speed_headline(paired["shape"], s, (
            f", {len(paired['times'][REFERENCE])} paired rounds at {paired['threads']} "
            f"thread(s): x{s['ratio']:.3f}")))
    sources = ([("the interleaved table", entry["times"])] if entry else []) + [
        (f"{len(p['times'][REFERENCE])} paired rounds at {p['threads']} thread(s)", p["times"])
        for p in results.get("paired", [])]
    for where, times in sources:
        if "loop over heads" in times and "d2lutil fused" in times:
            loop = summarize(times)["loop over heads"]
            vs_fused = summarize(times, reference="d2lutil fused")["loop over heads"]
            out.append((
                f"loop over heads at {shape_label(HEADLINE_SHAPE)}, forward+backward, "
                f"{where}: x{loop['ratio']:.2f} torch's time, x{vs_fused['ratio']:.2f} "
                "d2lutil fused's", None))
    memory = results.get("memory")
    if memory:
        summary = memory_summary(memory)
        fused, ref = summary.get("d2lutil fused"), summary.get(REFERENCE)
        if fused and ref and fused["rss_mib"] is not None and ref["rss_mib"]:
            ratio = fused["rss_mib"] / ref["rss_mib"]
            tensor_ratio = fused["tensor_mib"] / ref["tensor_mib"]
            out.append((
                f"peak memory increase of d2lutil fused / torch need_weights=False at "
                f"{shape_label(memory['shape'])}: x{ratio:.2f} by RSS ({fused['rss_mib']:.1f} "
                f"vs {ref['rss_mib']:.1f} MiB), x{tensor_ratio:.2f} by tensor bytes "
                f"({fused['tensor_mib']:.1f} vs {ref['tensor_mib']:.1f} MiB); "
                f"target <= {MEMORY_TARGET}",
                max(ratio, tensor_ratio) <= MEMORY_TARGET))
    masked = results.get("memory_masked")
    if masked:
        summary = memory_summary(masked)
        fused, ref = summary.get("d2lutil fused"), summary.get(REFERENCE)
        if fused and ref and ref["tensor_mib"]:
            out.append((
                f"the same with valid_lens (3/4 of the length): x"
                f"{fused['tensor_mib'] / ref['tensor_mib']:.2f} by tensor bytes "
                f"({fused['tensor_mib']:.1f} vs {ref['tensor_mib']:.1f} MiB)", None))
    return out


def noise_line(results):
    """How noisy the run was: the reference's spread over rounds, the load averages."""
    meta = results["meta"]
    parts = []
    entry = find_entry(results.get("timing", []), HEADLINE_SHAPE, "forward+backward")
    if entry:
        ref = summarize(entry["times"])[REFERENCE]
        parts.append(
            f"torch need_weights=False, forward+backward at {shape_label(HEADLINE_SHAPE)}, "
            f"ranged {_ms(ref['min_s'])} to {_ms(ref['max_s'])} ms over the interleaved "
            f"rounds (x{ref['max_s'] / ref['min_s']:.1f})")
    for paired in results.get("paired", []):
        ref = paired["times"][REFERENCE]
        q1, _, q3 = statistics.quantiles(ref, n=4) if len(ref) > 1 else ref * 3
        parts.append(
            f"{paired['threads']} thread(s), paired: quartiles {_ms(q1)} to {_ms(q3)} ms")
    if meta.get("load_per_round"):
        loads = ", ".join(f"{x:.1f}" for x in meta["load_per_round"])
        parts.append(f"1-minute load average after each round: {loads}")
    return "Noise: " + "; ".join(parts) + "." if parts else ""


def summary(results):
    """A short Markdown summary of a run, to quote in a README or an issue note."""
    meta = results["meta"]
    marks = {True: "met", False: "MISSED", None: "reported"}
    parts = [
        f"`make bench`, {meta['date']}: {meta['nproc']} cores ({meta['cpu']}), torch "
        f"{meta['torch']}, {meta['threads']} threads, float32 CPU; "
        f"{meta.get('seconds', '?')} s in all.",
        "",
    ]
    parts += [f"- {text}: **{marks[met]}**" for text, met in headlines(results)]
    parts.append("")
    if results.get("paired"):
        parts += [paired_table(results["paired"]), ""]
    if results.get("notebooks"):
        ok = [nb for nb in results["notebooks"] if "error" not in nb]
        parts.append("Notebooks in a fresh kernel (kernel start + imports + own work = total): "
                     + "; ".join(f"{nb['notebook'][:2]}: {nb['kernel_start_s']:.1f} + "
                                 f"{nb['imports_s']:.1f} + {nb['work_s']:.1f} = "
                                 f"{nb['total_s']:.1f} s" for nb in ok)
                     + (f"; in all {sum(nb['total_s'] for nb in ok):.1f} s." if ok else "."))
        failed = [nb["notebook"] for nb in results["notebooks"] if "error" in nb]
        if failed:
            parts.append(f"Failed: {', '.join(failed)}.")
        parts.append("")
    if results.get("decode"):
        parts += [decode.summary_line(results["decode"]), ""]
    noise = noise_line(results)
    if noise:
        parts += [noise, ""]
    return "\n".join(parts)


def markdown(results):
    meta = results["meta"]
    parts = [
        "# `make bench`: multi-head attention side by side",
        "",
        f"{meta['date']}; {meta['nproc']} cores, {meta['cpu']}; torch {meta['torch']}, "
        f"{meta['threads']} threads; float32 on the CPU. Load average before / after: "
        f"{meta.get('load_before', '?')} / {meta.get('load_after', '?')}.",
        "",
    ]
    if noise_line(results):
        parts += [noise_line(results), ""]
    marks = {True: "met", False: "MISSED", None: "reported"}
    if headlines(results):
        parts += ["## Targets", ""]
        parts += [f"- {text}: **{marks[met]}**" for text, met in headlines(results)]
        parts.append("")
    if results.get("timing"):
        parts += [
            "## Time per call",
            "",
            f"Median over {meta['rounds']} interleaved rounds (each round: "
            "`torch.utils.benchmark.Timer.blocked_autorange(min_run_time="
            f"{meta['min_run_time']})`, one per implementation, order rotated each round); "
            f"in brackets the median of the per-round ratios to `{REFERENCE}`. Self-attention "
            "(queries = keys = values). The last column is the reference's range over rounds.",
            "",
        ]
        for mode, what in (("forward", "Forward, eval mode, no grad"),
                           ("forward+backward", "Forward+backward, gradients of the input "
                                                "and every parameter")):
            parts += [f"### {what}", "", timing_table(results["timing"], mode), ""]
    if results.get("paired"):
        parts += [
            f"### Headline, paired: forward+backward at {shape_label(HEADLINE_SHAPE)}",
            "",
            "Only the implementations of the speed target and the loop over heads, "
            "alternated in many short rounds (`blocked_autorange(min_run_time=0.1)`, order "
            "rotated and reversed each round); each ratio to torch is taken within a round.",
            "",
            paired_table(results["paired"]),
            "",
        ]
    if results.get("memory"):
        memory = results["memory"]
        parts += [
            f"## Peak memory, one forward+backward at {shape_label(memory['shape'])}",
            "",
            f"Increase over a baseline after imports, construction and a tiny warm-up pass; "
            f"each implementation in its own process, median of {memory['repeats']} "
            "processes. See benchmarks/README.md for the two measures.",
            "",
            memory_table(memory),
            "",
        ]
    if results.get("memory_masked"):
        parts += [
            "With padding: every sequence has valid_lens = 3/4 of its length "
            "(torch: the matching `key_padding_mask`).",
            "",
            memory_table(results["memory_masked"]),
            "",
        ]
    if results.get("decode"):
        parts.append(decode.markdown(results["decode"]))
    if results.get("notebooks"):
        parts += [
            "## The chapter's notebooks, fresh kernel each",
            "",
            "Imports: every top-level import statement of the notebook, run first as one "
            "cell; own work: all the notebook's cells after that. The budget is for a 2-core "
            f"AVX2 CPU, whose time is x{COLAB_RATIO:g} this machine's under the AVX2 "
            "emulation; nbval adds its own comparison of outputs.",
            "",
            notebook_table(results["notebooks"]),
            "",
        ]
    if results.get("agreement"):
        worst = max(max(d.values()) for d in results["agreement"].values())
        parts += [
            "## Agreement",
            "",
            f"Before timing, every implementation's output, input gradient and kept weights "
            f"were compared with the reference's at every shape: largest difference {worst:.1e}.",
            "",
        ]
    return "\n".join(parts)


SHORT_NAMES = {
    "d2lutil fused": "d2lutil\nfused",
    "d2lutil weights kept": "d2lutil\nweights",
    "d2l": "d2l",
    REFERENCE: "torch\nnw=False",
    "torch need_weights=True": "torch\nnw=True",
    "loop over heads": "loop over\nheads",
}


def plot(results, path):
    """Save a 2 x 2 figure: the h sweep (time, ratio), ratios by shape, memory."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.ticker import ScalarFormatter

    from d2lutil.plotting import CHAPTER_STYLE

    timing = results.get("timing", [])
    mode = "forward+backward"
    sweep_base = HEADLINE_SHAPE[:3]
    sweep = sorted((e for e in timing if e["shape"][:3] == sweep_base and e["mode"] == mode),
                   key=lambda e: e["shape"][3])
    with plt.rc_context(CHAPTER_STYLE):
        fig, axes = plt.subplots(2, 2, figsize=(13, 9), layout="constrained")
        for ax, key, ylabel in ((axes[0, 0], "median_s", "ms per call (median of rounds)"),
                                (axes[0, 1], "ratio", f"time / {REFERENCE}\n(median of "
                                                      "per-round ratios)")):
            if sweep:
                heads = [e["shape"][3] for e in sweep]
                for name in IMPLS:
                    if name in sweep[0]["times"]:
                        ys = [summarize(e["times"])[name][key] for e in sweep]
                        ys = [y * 1e3 for y in ys] if key == "median_s" else ys
                        ax.plot(heads, ys, marker="o", label=name)
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.set_xticks(heads, labels=[str(h) for h in heads])
                ax.yaxis.set_major_formatter(ScalarFormatter())
                ax.yaxis.set_minor_formatter(ScalarFormatter())
                ax.tick_params(axis="y", which="minor", labelsize=8)
            ax.set_xlabel("num_heads")
            ax.set_ylabel(ylabel)
            ax.set_title(f"{mode}, (batch, length, d) = {tuple(sweep_base)}", fontsize=11)
        axes[0, 1].axhline(1.0, color="gray", linestyle="--", linewidth=1)
        axes[0, 0].legend(fontsize=9)
        ax = axes[1, 0]
        shapes = [e for e in timing if e["mode"] == mode and e["shape"][3] == 8]
        if shapes:
            names = [n for n in IMPLS if n in shapes[0]["times"]]
            width = 0.8 / len(names)
            xs = np.arange(len(shapes))
            for i, name in enumerate(names):
                ax.bar(xs + i * width, [summarize(e["times"])[name]["ratio"] for e in shapes],
                       width, label=name)
            ax.set_xticks(xs + 0.4 - width / 2,
                          labels=[shape_label(e["shape"]) for e in shapes], fontsize=9)
            ax.axhline(1.0, color="gray", linestyle="--", linewidth=1)
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(ScalarFormatter())
            ax.yaxis.set_minor_formatter(ScalarFormatter())
            ax.tick_params(axis="y", which="minor", labelsize=8)
        ax.set_ylabel(f"time / {REFERENCE}")
        ax.set_xlabel("(batch, length, d, h)")
        ax.set_title(f"{mode}, h = 8", fontsize=11)
        ax = axes[1, 1]
        if results.get("memory"):
            summary = memory_summary(results["memory"])
            names = [n for n in IMPLS if n in summary]
            xs = np.arange(len(names))
            ax.bar(xs - 0.2, [summary[n]["rss_mib"] or 0 for n in names], 0.4, label="RSS")
            ax.bar(xs + 0.2, [summary[n]["tensor_mib"] for n in names], 0.4,
                   label="tensor bytes")
            ax.set_xticks(xs, labels=[SHORT_NAMES.get(n, n) for n in names], fontsize=9)
            ax.set_ylabel("peak increase, MiB")
            ax.set_title(f"memory, {mode} at {shape_label(results['memory']['shape'])}",
                         fontsize=11)
            ax.legend(loc="upper center")
        fig.savefig(path, dpi=100)
        plt.close(fig)
