"""The rendered chapter in a real browser: headless Chromium opens the index, one page and
one slide deck (from file://, as in a lecture hall without a network) and checks that the
figures and formulas render, the links resolve and nothing is fetched from the network.

The chapter is rendered once per session into a tmp folder from the stored outputs of the
chapter notebooks (tools/chapter.py render --no-execute); without chapter notebooks, from the
small demo chapter of tools/demo_chapter.py, executed (also with CHAPTER_BROWSER_DEMO=1, to
check the tools apart from the chapter). Screenshots are written next to the
rendered files (their folder is printed; set CHAPTER_SCREENSHOTS=DIR to also copy them there).

Without chromium this test is skipped locally; with the environment variable CI set, it fails.
"""

import base64
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import chapter  # noqa: E402
import colab  # noqa: E402
import demo_chapter  # noqa: E402

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps", "--hide-scrollbars", "--window-size=1280,900",
         "--remote-debugging-port=0"]
WAIT = 30  # seconds for a page to load and typeset


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="session")
def chromium_path():
    path = find_chromium()
    if path is None:
        message = ("chromium is not installed (Debian: apt-get install chromium); "
                   "the browser test of the rendered chapter needs it")
        if os.environ.get("CI"):
            pytest.fail(message + " and CI is set, so it must run here")
        pytest.skip(message)
    return path


class Browser:
    """Headless Chromium driven over the DevTools protocol (one tab)."""

    def __init__(self, executable, profile):
        import websocket  # websocket-client, installed with jupyter

        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = pathlib.Path(profile) / "DevToolsActivePort"
        deadline = time.monotonic() + WAIT
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.close()
                raise RuntimeError(f"chromium did not start (exit code {self.process.poll()})")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            pages = [t for t in json.load(r) if t["type"] == "page"]
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"],
                                              timeout=WAIT, suppress_origin=True)
        self.next_id = 0
        self.requests = []  # every URL the tab requested
        self.console_errors = []
        self.call("Network.enable")
        self.call("Runtime.enable")
        self.call("Page.enable")

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            if message.get("method") == "Network.requestWillBeSent":
                self.requests.append(message["params"]["request"]["url"])
            if message.get("method") == "Runtime.exceptionThrown":
                self.console_errors.append(message["params"]["exceptionDetails"])

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, path, ready):
        """Load ``path`` and wait until the JS expression ``ready`` is true."""
        self.requests.clear()
        self.console_errors.clear()
        self.call("Page.navigate", url=path.as_uri())
        deadline = time.monotonic() + WAIT
        while not self.evaluate(f"document.readyState === 'complete' && !!({ready})"):
            if time.monotonic() > deadline:
                raise AssertionError(f"{path.name}: not ready after {WAIT} s: {ready}")
            time.sleep(0.2)
        time.sleep(0.5)  # let the last layout settle before measuring

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self):
        if getattr(self, "ws", None) is not None:
            self.ws.close()
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def render_chapter(out):
    """Render the chapter (or the demo chapter) into ``out``; return the chapter notebooks."""
    notebooks = colab.chapter_notebooks(ROOT)
    if notebooks and not os.environ.get("CHAPTER_BROWSER_DEMO"):
        status = chapter.cmd_render(notebooks, out, execute_notebooks=False)
        return status, notebooks
    demo = out.parent / "demo"
    paths = demo_chapter.write_demo(demo)
    colab.cmd_stamp([], root=demo)
    for path in paths:
        chapter.cmd_execute([path])
    notebooks = colab.chapter_notebooks(demo)
    return chapter.cmd_render(notebooks, out, root=demo), notebooks


@pytest.fixture(scope="session")
def site(chromium_path, tmp_path_factory):
    base = tmp_path_factory.mktemp("rendered")
    out = base / "build"
    status, notebooks = render_chapter(out)
    assert status == 0, "tools/chapter.py render failed"
    if not (out / "assets" / "mathjax").is_dir():
        message = "npm is missing, so the rendered pages load reveal.js and MathJax from CDNs"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    print(f"\nrendered chapter and screenshots in {out}")
    return out, notebooks


@pytest.fixture(scope="session")
def browser(chromium_path, tmp_path_factory):
    b = Browser(chromium_path, tempfile.mkdtemp(prefix="chromium-profile-"))
    yield b
    b.close()


def keep_screenshot(path):
    target = os.environ.get("CHAPTER_SCREENSHOTS")
    if target:
        pathlib.Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, pathlib.Path(target) / path.name)


PAGE_STATE = """JSON.stringify({
  images: Array.from(document.images).map(i => ({src: i.getAttribute('src').slice(0, 80),
      complete: i.complete, width: i.naturalWidth, height: i.naturalHeight})),
  formulas: document.querySelectorAll('.MathJax_CHTML, mjx-container').length,
  mathErrors: document.querySelectorAll('.MathJax_Error, merror, .mjx-merror').length,
  rawDollars: Array.from(document.querySelectorAll('.jp-MarkdownOutput'))
      .filter(e => /\\$[^$\\s][^$]*\\$/.test(e.innerText)).length,
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
})"""


def local_requests(browser):
    return [u for u in browser.requests if not u.startswith(("file:", "data:", "about:"))]


def check_links(links, where):
    """Every file:// link of the page exists; returns the list of local targets."""
    targets = []
    for url in links:
        parsed = urllib.parse.urlparse(url)
        if parsed.scheme != "file":
            continue
        target = pathlib.Path(urllib.parse.unquote(parsed.path))
        assert target.exists(), f"{where}: link to missing file {target}"
        targets.append(target)
    return targets


def pick_page(out, notebooks):
    """The first chapter page whose notebook has a formula and a figure (else the first)."""
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        formula = any("$" in c.source for c in nb.cells if c.cell_type == "markdown")
        figure = any("image/png" in o.get("data", {}) for c in nb.cells
                     if c.cell_type == "code" for o in c.outputs)
        if formula and figure:
            return out / f"{path.stem}.html"
    return out / f"{notebooks[0].stem}.html"


def test_index_links_resolve(site, browser):
    out, notebooks = site
    browser.open(out / "index.html", "document.querySelectorAll('a').length > 0")
    state = json.loads(browser.evaluate(PAGE_STATE))
    keep_screenshot(browser.screenshot(out / "screenshot-index.png"))
    targets = check_links(state["links"], "index.html")
    names = {t.name for t in targets}
    for nb in notebooks:
        assert f"{nb.stem}.html" in names, f"index.html does not link the page of {nb.name}"
        assert f"{nb.stem}.slides.html" in names, \
            f"index.html does not link the slides of {nb.name}"
    assert local_requests(browser) == [], f"index.html fetched: {local_requests(browser)}"


def test_page_renders_figures_formulas_and_links(site, browser):
    out, notebooks = site
    page = pick_page(out, notebooks)
    browser.open(page, "window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0 && "
                       "document.querySelectorAll('.MathJax_CHTML').length > 0")
    state = json.loads(browser.evaluate(PAGE_STATE))
    keep_screenshot(browser.screenshot(out / f"screenshot-{page.stem}.png"))
    figures = [i for i in state["images"] if i["src"].startswith("data:image/png")]
    assert figures, f"{page.name}: no figure (PNG img) on the page"
    broken = [i for i in state["images"] if not (i["complete"] and i["width"] and i["height"])]
    assert not broken, f"{page.name}: images that did not load: {broken}"
    assert state["formulas"] > 0, f"{page.name}: no formula typeset by MathJax"
    assert state["mathErrors"] == 0, f"{page.name}: {state['mathErrors']} MathJax errors"
    assert state["rawDollars"] == 0, f"{page.name}: Markdown with untypeset $...$ formulas"
    check_links(state["links"], page.name)
    assert any(link.endswith("index.html") for link in state["links"]), \
        f"{page.name}: no link back to the index (its navigation cell is missing: " \
        "python tools/colab.py stamp)"
    assert local_requests(browser) == [], f"{page.name} fetched: {local_requests(browser)}"


SLIDE_WITH_FORMULA = """(() => {
  const tops = Array.from(document.querySelectorAll('.reveal .slides > section'));
  for (let h = 0; h < tops.length; h++) {
    const inner = tops[h].querySelectorAll(':scope > section');
    const list = inner.length ? Array.from(inner) : [tops[h]];
    for (let v = 0; v < list.length; v++) {
      if (list[v].querySelector('.MathJax_CHTML')) { return '#/' + h + '/' + v; }
    }
  }
  return '';
})()"""


def test_slides_render_figures_and_formulas(site, browser):
    out, notebooks = site
    deck = pick_page(out, notebooks).with_suffix("").with_suffix(".slides.html")
    ready = ("document.querySelector('.reveal.ready') && window.MathJax && MathJax.Hub && "
             "MathJax.Hub.queue.pending === 0")
    browser.open(deck, ready)
    state = json.loads(browser.evaluate(PAGE_STATE))
    keep_screenshot(browser.screenshot(out / f"screenshot-{deck.stem}-title.png"))
    slides = browser.evaluate("document.querySelectorAll('.reveal .slides section').length")
    assert slides > 1, f"{deck.name}: reveal.js made {slides} slides"
    assert state["formulas"] > 0, f"{deck.name}: no formula typeset by MathJax"
    assert state["mathErrors"] == 0, f"{deck.name}: {state['mathErrors']} MathJax errors"
    assert any(i["src"].startswith("data:image/png") for i in state["images"]), \
        f"{deck.name}: no figure in the deck"
    broken = [i for i in state["images"] if not (i["complete"] and i["width"] and i["height"])]
    assert not broken, f"{deck.name}: images that did not load: {broken}"
    check_links(state["links"], deck.name)
    hash_ = browser.evaluate(SLIDE_WITH_FORMULA)
    assert hash_, f"{deck.name}: no slide holds a typeset formula"
    browser.evaluate(f"location.hash = '{hash_}'")
    time.sleep(1.5)  # the slide transition
    visible = browser.evaluate(
        "Array.from(document.querySelectorAll('section.present .MathJax_CHTML'))"
        ".filter(e => e.getBoundingClientRect().width > 0).length")
    keep_screenshot(browser.screenshot(out / f"screenshot-{deck.stem}-formula.png"))
    assert visible > 0, f"{deck.name}: the formula slide {hash_} shows no formula"
    assert local_requests(browser) == [], f"{deck.name} fetched: {local_requests(browser)}"
