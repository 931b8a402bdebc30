"""How long `make grade` takes per submission, and how much memory a kernel holds: the
figures course/README.md ("Throughput") states. Not a test: run it on a quiet machine.

    .venv/bin/python course/bench_grading.py [--copies 2] [--jobs 1 2]

It grades a class of right answers (course/tests/synthetic_class.py: each chapter
notebook's worked solutions as a student's notebook), ``copies`` students per notebook,
with ``--book`` (no sealed package to build), once per JOBS, sampling every kernel's
resident memory (psutil, every 0.2 s), and prints the minutes per submission, the largest
kernel and what follows for a class of 200 students and 10 notebooks.
"""

import argparse
import pathlib
import statistics
import sys
import tempfile
import threading
import time

import psutil

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "tests"), str(HERE.parent / "tools")]

import book  # noqa: E402
import grade  # noqa: E402
import synthetic_class  # noqa: E402


def sample_kernels(peaks, stop):
    """Record each child process's largest resident set size (bytes) into ``peaks``."""
    me = psutil.Process()
    while not stop.is_set():
        for child in me.children(recursive=True):
            try:
                peaks[child.pid] = max(peaks.get(child.pid, 0), child.memory_info().rss)
            except psutil.Error:  # it ended meanwhile
                pass
        stop.wait(0.2)


def grade_once(folder, jobs, out):
    """(wall seconds, [seconds per submission], [peak bytes per process]) of one grading."""
    peaks, stop = {}, threading.Event()
    sampler = threading.Thread(target=sample_kernels, args=(peaks, stop), daemon=True)
    sampler.start()
    start = time.perf_counter()
    _, options = grade.parse_args([str(folder), "--book", "--jobs", str(jobs), "--out",
                                   str(out)])
    rows = grade.run(folder, options)
    wall = time.perf_counter() - start
    stop.set()
    sampler.join()
    if any(row["status"] != "graded" for row in rows):
        raise SystemExit(f"not every submission was graded: "
                         f"{[(r['file'], r['status']) for r in rows]}")
    return wall, [float(row["seconds"]) for row in rows], sorted(peaks.values())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=2, help="students per notebook")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args(argv)
    if args.copies < 1 or min(args.jobs) < 1:
        parser.error("--copies and --jobs must be at least 1")
    numbers = [book.number(p) for p in book.chapter_notebooks()]
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        folder = pathlib.Path(tmp) / "class"
        folder.mkdir()
        for number in numbers:
            for copy in range(args.copies):
                synthetic_class.write(synthetic_class.right(number),
                                      folder / f"s{copy}__{number}.ipynb")
        count = len(numbers) * args.copies
        print(f"{count} submissions (notebooks {numbers[0]}-{numbers[-1]}, {args.copies} "
              f"students each), graded with --book, {psutil.cpu_count()} CPUs")
        for jobs in args.jobs:
            wall, seconds, peaks = grade_once(folder, jobs, pathlib.Path(tmp) / f"{jobs}.csv")
            kernel = max(peaks) / 2**30
            per = wall / count / 60
            print(f"JOBS={jobs}: {wall:.0f} s in all, {per:.2f} min per submission "
                  f"(each run: median {statistics.median(seconds):.0f} s, longest "
                  f"{max(seconds):.0f} s); largest process {kernel:.2f} GiB; 200 students "
                  f"x 10 notebooks: {2000 * per / 60:.1f} h")


if __name__ == "__main__":
    sys.exit(main())
