"""`make bench`: multi-head attention implementations side by side, and the chapter's run time.

    python benchmarks/run.py --out build/bench            # the full run (7 to 10 minutes)
    python benchmarks/run.py --out /tmp/bench --quick     # a smaller run, to iterate
    python benchmarks/run.py --out build/bench --skip notebooks --skip memory

Writes results.json (raw per-round figures), bench.md (the tables), summary.md (the
headline figures, short enough to quote) and bench.png (the figure) into --out, and prints
bench.md. The method is in benchmarks/README.md.
"""

import argparse
import datetime
import json
import logging
import os
import pathlib
import platform
import re
import subprocess
import sys
import time

# torch.utils.benchmark imports cpp_extension, which warns about CUDA on a CPU machine.
logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)

import torch  # noqa: E402
from torch.utils import benchmark  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tools"))  # book: which notebooks the chapter has

import book  # noqa: E402
import decode  # noqa: E402
import mha_impls  # noqa: E402
import report  # noqa: E402

SHAPES = [(32, 128, 256, 8), (8, 512, 256, 8), (1, 2048, 256, 8)]
HEAD_SWEEP = [1, 2, 4, 8, 16, 32]
QUICK_SHAPES = [(32, 128, 256, 8), (1, 512, 256, 8)]
QUICK_HEAD_SWEEP = [1, 8]
MODES = ("forward", "forward+backward")


def configs(quick):
    shapes, sweep = (QUICK_SHAPES, QUICK_HEAD_SWEEP) if quick else (SHAPES, HEAD_SWEEP)
    out = list(shapes)
    out += [(32, 128, 256, h) for h in sweep if (32, 128, 256, h) not in out]
    return out


def machine_info(threads):
    cpu = "unknown CPU"
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "torch": torch.__version__,
        "threads": threads,
        "python": platform.python_version(),
        "load_before": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


class Log:
    def __init__(self):
        self.start = time.perf_counter()

    def __call__(self, message):
        print(f"[{time.perf_counter() - self.start:6.0f} s] {message}", flush=True)


def prepare(shape, names, seed=0):
    """Build the implementations at one shape, check they agree, and make the inputs."""
    batch_size, length, num_hiddens, num_heads = shape
    impls = [mha_impls.build(name, num_hiddens, num_heads, seed=seed) for name in names]
    # The check runs at batch size 2 at most: the batch axis adds nothing to check.
    diffs = mha_impls.check_agreement(impls, min(batch_size, 2), length, num_hiddens, seed=seed)
    gen = torch.Generator().manual_seed(seed + 2)
    x = torch.randn(batch_size, length, num_hiddens, generator=gen)
    grad_output = torch.randn(batch_size, length, num_hiddens, generator=gen)
    return impls, x, grad_output, diffs


def statement(impl, mode, x, grad_output):
    """A no-argument callable doing one forward (no grad) or one forward+backward."""
    if mode == "forward":
        def forward():
            with torch.no_grad():
                impl.forward(x, x, x)
        return forward
    x_grad = x.detach().requires_grad_()

    def forward_backward():
        mha_impls.forward_backward(impl, x_grad, grad_output)
    return forward_backward


def run_timing(shapes, names, rounds, min_run_time, threads, log):
    prepared, agreement = {}, {}
    for shape in shapes:
        impls, x, grad_output, diffs = prepare(shape, names)
        prepared[shape] = (impls, x, grad_output)
        agreement[report.shape_label(shape)] = diffs
        log(f"built and checked {report.shape_label(shape)}: largest difference "
            f"{max(diffs.values()):.1e}")
    entries = {(shape, mode): {name: [] for name in names} for shape in shapes for mode in MODES}
    loads = []
    for r in range(rounds):
        for shape in shapes:
            impls, x, grad_output = prepared[shape]
            order = impls[r % len(impls):] + impls[:r % len(impls)]
            for mode in MODES:
                for impl in impls:
                    impl.module.train(mode != "forward")
                for impl in order:
                    timer = benchmark.Timer(
                        stmt="fn()", globals={"fn": statement(impl, mode, x, grad_output)},
                        num_threads=threads)
                    measurement = timer.blocked_autorange(min_run_time=min_run_time)
                    entries[shape, mode][impl.name].append(measurement.median)
            for impl in impls:  # kept weights would otherwise hold memory until next round
                for module in impl.module.modules():
                    if hasattr(module, "attention_weights"):
                        module.attention_weights = None
        load = os.getloadavg()[0]
        loads.append(load)
        log(f"timing round {r + 1}/{rounds} done (load average {load:.2f})")
    timing = [{"shape": list(shape), "mode": mode, "times": times}
              for (shape, mode), times in entries.items()]
    return timing, agreement, loads


def run_paired(shape, names, rounds, min_run_time, threads_list, log):
    """The headline comparison: a few implementations alternated block by block.

    Many short rounds of forward+backward, the order rotated and reversed from round to
    round, so each per-round ratio compares measurements taken a fraction of a second
    apart. Repeated for each thread count in ``threads_list``.
    """
    impls, x, grad_output, _ = prepare(shape, names)
    out = []
    for threads in threads_list:
        times = {name: [] for name in names}
        for r in range(rounds):
            order = impls[r % len(impls):] + impls[:r % len(impls)]
            for impl in (order if r % 2 == 0 else order[::-1]):
                impl.module.train()
                timer = benchmark.Timer(
                    stmt="fn()",
                    globals={"fn": statement(impl, "forward+backward", x, grad_output)},
                    num_threads=threads)
                times[impl.name].append(timer.blocked_autorange(min_run_time=min_run_time).median)
        out.append({"shape": list(shape), "mode": "forward+backward", "threads": threads,
                    "times": times})
        log(f"paired rounds at {threads} thread(s) done")
    return out


def run_memory(names, shape, repeats, threads, log, masked=False):
    batch_size, length, num_hiddens, num_heads = shape
    runs = {name: [] for name in names}
    env = dict(os.environ, KINETO_LOG_LEVEL="5")
    for r in range(repeats):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            command = [sys.executable, str(HERE / "memory.py"), "--impl", name,
                       "--batch", str(batch_size), "--length", str(length),
                       "--num-hiddens", str(num_hiddens), "--num-heads", str(num_heads),
                       "--threads", str(threads)] + (["--masked"] if masked else [])
            done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"memory.py --impl {name!r} failed:\n{done.stderr[-2000:]}")
            runs[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
        log(f"memory repeat {r + 1}/{repeats} done" + (" (valid_lens)" if masked else ""))
    return {"shape": list(shape), "repeats": repeats, "runs": runs, "masked": masked}


def run_notebooks(paths, log):
    import notebook_times

    results = []
    for path in paths:
        try:
            result = notebook_times.time_notebook(path, env=notebook_times.EMULATION)
        except Exception as error:  # a failing notebook is reported, not fatal
            # CellExecutionError's message ends with the cell's own error, in colour
            last = (re.sub(r"\x1b\[[0-9;]*m", "", str(error)).strip().splitlines() or [""])[-1]
            result = {"notebook": pathlib.Path(path).name,
                      "error": f"{type(error).__name__}: {last[:200]}"}
        results.append(result)
        log(f"notebook {result['notebook']}: " + (
            f"{result['total_s']:.1f} s" if "total_s" in result else result["error"]))
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "build" / "bench")
    parser.add_argument("--quick", action="store_true",
                        help="fewer shapes and rounds, memory at length 512 (about a minute "
                             "plus the notebooks)")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved timing rounds")
    parser.add_argument("--min-run-time", type=float, default=None,
                        help="seconds per blocked_autorange measurement")
    parser.add_argument("--paired-rounds", type=int, default=None,
                        help="rounds of the headline fused-vs-torch comparison")
    parser.add_argument("--memory-repeats", type=int, default=None,
                        help="processes per implementation for the memory figures")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(),
                        help="torch threads (default: torch's own choice)")
    parser.add_argument("--skip", action="append", default=[],
                        choices=["timing", "paired", "memory", "decode", "notebooks"])
    parser.add_argument("--impls", nargs="+", default=list(mha_impls.IMPLS),
                        choices=mha_impls.IMPLS, metavar="NAME",
                        help=f"subset of {mha_impls.IMPLS} (the reference is always kept)")
    parser.add_argument("--notebooks", nargs="*", default=None,
                        help="notebooks to time (default: notebooks/*.ipynb)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (2 if args.quick else 5)
    min_run_time = args.min_run_time or (0.05 if args.quick else 0.1)
    repeats = args.memory_repeats or (1 if args.quick else 2)
    names = [n for n in mha_impls.IMPLS if n in args.impls or n == mha_impls.REFERENCE]
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    args.out.mkdir(parents=True, exist_ok=True)
    log = Log()

    results = {"meta": machine_info(args.threads)}
    results["meta"].update(rounds=rounds, min_run_time=min_run_time, quick=args.quick)
    log(f"torch {torch.__version__}, {args.threads} threads, {results['meta']['cpu']}, "
        f"load {results['meta']['load_before']}")
    if "timing" not in args.skip:
        results["timing"], results["agreement"], results["meta"]["load_per_round"] = run_timing(
            configs(args.quick), names, rounds, min_run_time, args.threads, log)
    if "paired" not in args.skip:
        threads_list = [args.threads] + ([1] if args.threads > 1 else [])
        results["paired"] = run_paired(
            tuple(report.HEADLINE_SHAPE),
            [n for n in report.PAIRED_IMPLS if n in names],
            args.paired_rounds or (6 if args.quick else 20), 0.1, threads_list, log)
    if "memory" not in args.skip:
        shape = (1, 512 if args.quick else 2048, 256, 8)
        results["memory"] = run_memory(names, shape, repeats, args.threads, log)
        masked_names = [n for n in report.MASKED_IMPLS if n in names]
        results["memory_masked"] = run_memory(masked_names, shape, repeats, args.threads, log,
                                              masked=True)
    if "decode" not in args.skip:
        results["decode"] = decode.run(decode.QUICK if args.quick else decode.FULL,
                                       max_rounds=3 if args.quick else 5, log=log)
    if "notebooks" not in args.skip:
        paths = args.notebooks
        if paths is None:
            paths = [book.relpath_of(p) for p in book.chapter_notebooks()]
        results["notebooks"] = run_notebooks(paths, log)
    results["meta"]["load_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    results["meta"]["seconds"] = round(time.perf_counter() - log.start)

    (args.out / "results.json").write_text(json.dumps(results, indent=1))
    text = report.markdown(results)
    (args.out / "bench.md").write_text(text + "\n")
    (args.out / "summary.md").write_text(report.summary(results))
    report.plot(results, args.out / "bench.png")
    print()
    print(text)
    log(f"wrote {args.out / 'bench.md'}, {args.out / 'bench.png'} and results.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
