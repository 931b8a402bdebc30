"""The widgets' browser versions on the built site: page weight and time to an answer.

    python benchmarks/widget_pages.py                   # builds the site into a temporary folder
    python benchmarks/widget_pages.py --site build/site      # a site built already (make chapter)
    python benchmarks/widget_pages.py --site build/site --runs 20 --rounds 5

Not run by `make bench`, and nothing here is a test: it prints figures. It opens the built
site's pages from disk (``file://``, as a reader who downloaded the site would) in the
system's Chromium driven by Playwright, with the network cut off as the browser tests cut
it (tests/browser/browsing.py), each round in a fresh browser context (empty caches):

* **notebook 9's head lab**: the page weight before the lab is used (the bytes of every file
  the page loaded, each counted once: for ``file://`` its size on disk, otherwise the bytes
  of the response; ``data:`` and ``blob:`` addresses are already in memory and count
  nothing); the time from pressing Pronounce the first time (the lab's first word) until
  the answer is shown, which includes loading ONNX Runtime Web and the seed's model; the
  page weight after; then ``--runs`` further words, one after the other, and the median
  time per word (the model loaded: the greedy loop alone, one run of the model per phoneme).
* **notebook 5's alignment**: the time from pressing Draw the map the first time to the map
  (the runtime and the alignment model loaded, one run).

A time runs from the button's click event to the moment widgets.js sets the widget root's
``data-runs`` (site/widgets/widgets.js: it counts every answer shown and sets
``data-status`` to "done", or to "error", which stops this script), both read with the page's
own ``performance.now()``, so Playwright's polling adds nothing to it.

Each measurement is made at Chromium's CPU throttling x4 (CDP
``Emulation.setCPUThrottlingRate``, the rate Lighthouse uses for a mid-range phone) and
without throttling (x1), and is the median over ``--rounds`` fresh pages. To read a time as
that of a 2-core AVX2 CPU like Colab's or a student's laptop, multiply the x1 figure by
``report.COLAB_RATIO`` (= 2: issue 34 measured such a machine 1.98 times slower than this
one; ONNX Runtime Web runs WebAssembly with 128-bit SIMD, which no AVX-512 speeds up, so no
instruction-set emulation is needed first). The x4 figures stand for a slower machine still.
The times vary with the machine's load, printed with them: on a busy machine, run more
rounds.
"""

import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))  # report imports tools/book.py
import report  # noqa: E402  (benchmarks/report.py: COLAB_RATIO)

PAGES = {"head-lab": "notebooks/09_reading_the_heads.html",
         "alignment": "notebooks/05_alignment_heatmap.html"}
BUTTONS = {"head-lab": "Pronounce", "alignment": "Draw the map"}
#: The further words of the head lab, in turn: both length limits, words the notebooks use.
WORDS = ["attention", "translation", "knight", "cat", "abolitionist", "thought", "queue",
         "rhythm", "yacht", "phoneme", "straightened", "ohm"]
THROTTLES = (4, 1)
TIMEOUT_MS = 300_000  # one answer at most; the first under x4 takes seconds, not minutes

# In the page: every click on a button of the widget and every answer shown, timed with the
# page's clock (a MutationObserver runs after widgets.js has set data-runs and data-status).
RECORD = """root => {
  const record = {clicks: [], answers: []};
  root.addEventListener("click", e => {
    if (e.target.closest("button")) record.clicks.push(performance.now());
  }, true);
  new MutationObserver(() => record.answers.push(
    {at: performance.now(), status: root.dataset.status,
     text: (root.querySelector(".cw-text") || {}).textContent || ""}))
    .observe(root, {attributes: true, attributeFilter: ["data-runs"]});
  self.widgetBench = record;
}"""


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit("no Chromium found (chromium, chromium-browser, google-chrome, chrome)")


def build_site(out):
    """Build the site without executing the notebooks (their stored outputs) into ``out``."""
    started = time.perf_counter()
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "chapter.py"), "build",
                          "--no-execute", "--out", str(out)],
                         capture_output=True, text=True, cwd=ROOT)
    if run.returncode:
        sys.stdout.write(run.stdout[-3000:])
        sys.stderr.write(run.stderr[-3000:])
        raise SystemExit(f"tools/chapter.py build failed ({run.returncode})")
    print(f"built the site into {out} in {time.perf_counter() - started:.0f} s")


class Loaded:
    """The addresses a page requested (each counted once) and their sizes in bytes."""
    def __init__(self, page):
        self.sizes = {}
        page.on("requestfinished", self._finished)

    def _finished(self, request):
        url = urllib.parse.urldefrag(request.url)[0]
        scheme = urllib.parse.urlparse(url).scheme
        if url in self.sizes or scheme in ("data", "blob"):
            return
        if scheme == "file":
            path = pathlib.Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
            self.sizes[url] = path.stat().st_size if path.is_file() else 0
        else:
            response = request.response()
            self.sizes[url] = len(response.body()) if response else 0

    def total(self):
        return sum(self.sizes.values())


def widget(page, name):
    """The widget's root once widgets.js has filled it, recording its clicks and answers."""
    root = page.locator(f'.chapter-widget[data-widget="{name}"]')
    page.wait_for_selector(f'.chapter-widget[data-widget="{name}"][data-status="idle"]',
                           timeout=TIMEOUT_MS)
    root.evaluate(RECORD)
    return root


def press(page, root, name, count):
    """Press the widget's button and wait for answer number ``count``; its time in s."""
    root.get_by_role("button", name=BUTTONS[name]).click()
    page.wait_for_function("n => self.widgetBench.answers.length >= n", arg=count,
                           timeout=TIMEOUT_MS)
    record = page.evaluate("() => self.widgetBench")
    answer = record["answers"][count - 1]
    if answer["status"] == "error":
        raise SystemExit(f"the {name} widget failed: {answer['text']}")
    return (answer["at"] - record["clicks"][count - 1]) / 1000, answer["text"]


def open_page(browser, site, name, rate):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    loaded = Loaded(page)
    if rate != 1:
        context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": rate})
    page.goto((site / PAGES[name]).resolve().as_uri(), wait_until="load")
    return context, page, loaded


def head_lab_round(browser, site, rate, runs):
    context, page, loaded = open_page(browser, site, "head-lab", rate)
    try:
        root = widget(page, "head-lab")
        before = loaded.total()
        first, text = press(page, root, "head-lab", 1)
        after = loaded.total()
        box = root.locator('input[type="text"]')
        times = []
        for k in range(runs):
            box.fill(WORDS[k % len(WORDS)])
            times.append(press(page, root, "head-lab", k + 2)[0])
        return {"before": before, "first": first, "after": after, "per_word": times,
                "text": text, "files": dict(loaded.sizes)}
    finally:
        context.close()


def alignment_round(browser, site, rate):
    context, page, loaded = open_page(browser, site, "alignment", rate)
    try:
        root = widget(page, "alignment")
        before = loaded.total()
        first, text = press(page, root, "alignment", 1)
        return {"before": before, "first": first, "after": loaded.total(), "text": text}
    finally:
        context.close()


def measure(site, runs, rounds, throttles, chromium):
    from playwright.sync_api import sync_playwright

    results = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--host-resolver-rules=MAP * ~NOTFOUND"])
        try:
            for rate in throttles:
                results[rate] = {
                    "head-lab": [head_lab_round(browser, site, rate, runs)
                                 for _ in range(rounds)],
                    "alignment": [alignment_round(browser, site, rate) for _ in range(rounds)]}
                lab = results[rate]["head-lab"]
                print(f"x{rate}: head lab first answers "
                      + ", ".join(f"{r['first']:.2f}" for r in lab) + " s; alignment's "
                      + ", ".join(f"{r['first']:.2f}" for r in results[rate]["alignment"])
                      + " s", flush=True)
        finally:
            browser.close()
    return results


def mb(n):
    return f"{n / 1e6:.2f} MB"


def table(results, runs, rounds):
    median = statistics.median
    lines = [f"| CPU | notebook 9: page before | first answer | page after | per word "
             f"(median of {runs} words x {rounds} rounds) | notebook 5: first map |",
             "|---|---|---|---|---|---|"]
    for rate, both in results.items():
        lab, align = both["head-lab"], both["alignment"]
        words = [t for r in lab for t in r["per_word"]]
        lines.append(
            f"| x{rate} | {mb(median(r['before'] for r in lab))} "
            f"| {median(r['first'] for r in lab):.2f} s "
            f"| {mb(median(r['after'] for r in lab))} "
            f"| {1000 * median(words):.0f} ms (min {1000 * min(words):.0f}, "
            f"max {1000 * max(words):.0f}) "
            f"| {median(r['first'] for r in align):.2f} s |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=pathlib.Path, default=None,
                        help="a built site (default: build one into a temporary folder)")
    parser.add_argument("--runs", type=int, default=10,
                        help="further words after the first, per round (default 10)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="fresh pages per widget and throttling rate (default 3)")
    parser.add_argument("--throttle", type=float, nargs="+", default=list(THROTTLES),
                        help="CPU throttling rates (default 4 1)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.rounds < 1:
        parser.error("--runs and --rounds must be at least 1")
    chromium = find_chromium()
    with tempfile.TemporaryDirectory(prefix="widget-bench-") as tmp:
        site = args.site
        if site is None:
            site = pathlib.Path(tmp) / "site"
            build_site(site)
        missing = [rel for rel in PAGES.values() if not (site / rel).is_file()]
        if missing:
            raise SystemExit(f"{site} has no {missing[0]}: build the site first")
        load = os.getloadavg()[0]
        results = measure(site, args.runs, args.rounds,
                          [int(r) if r == int(r) else r for r in args.throttle], chromium)
    first = results[next(iter(results))]["head-lab"][0]
    print()
    print(f"Chromium {chromium}, {os.cpu_count()} CPUs, load average {load:.1f} at the "
          f"start and {os.getloadavg()[0]:.1f} at the end; {args.rounds} rounds, medians.")
    print(f"The head lab's first answer: {first['text']!r}")
    print("Loaded with the lab's first answer: " + ", ".join(
        f"{pathlib.PurePosixPath(urllib.parse.urlparse(url).path).name} {mb(size)}"
        for url, size in first["files"].items() if size > 100_000))
    print()
    print(table(results, args.runs, args.rounds))
    if 1 in results:
        median, ratio = statistics.median, report.COLAB_RATIO
        lab, align = results[1]["head-lab"], results[1]["alignment"]
        words = [t for r in lab for t in r["per_word"]]
        print(f"\nOn a 2-core AVX2 CPU (x1 times report.COLAB_RATIO = {ratio:g}): first answer "
              f"about {ratio * median(r['first'] for r in lab):.1f} s, a word about "
              f"{ratio * 1000 * median(words):.0f} ms, the first map about "
              f"{ratio * median(r['first'] for r in align):.1f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
