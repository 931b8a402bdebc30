"""Where a student or lecturer runs the notebooks: JupyterLab (with jupyterlab-rise) on a
loopback port over a copy of notebooks/. In JupyterLab and Notebook 7 the navigation cell's
Next link opens the next notebook; in the RISE slideshow of `make present` at 1280x800 every
slide taller than the screen scrolls to its end. A file apart from test_browser.py, so that
`make test`'s two workers run the two side by side."""

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat
import pytest

import book
import colab
from test_browser import ROOT, WAIT_MS, screenshot


@pytest.fixture(scope="module")
def lab(browser, tmp_path_factory):
    """(base URL, token) of JupyterLab with jupyterlab-rise, listening on the loopback only,
    serving a copy of notebooks/ (the tracked notebooks stay untouched)."""
    root = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", root / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    # The chapter's slides fit the screen (tools/colab.py): the copy of the first notebook
    # gets one slide that cannot, for the RISE test to scroll.
    first = root / book.relpath_of(book.chapter_notebooks()[0])
    nb = book.read(first)
    tall = nbformat.v4.new_markdown_cell(
        "### A slide taller than the screen\n\n" + "\n\n".join(
            f"Paragraph {k} of a long slide." for k in range(1, 41)), id="tall-slide")
    tall.metadata["slideshow"] = {"slide_type": "slide"}
    nb.cells.insert(len(nb.cells) - 1, tall)
    nbformat.write(nb, first)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_PLATFORM_DIRS": "1", "JUPYTER_CONFIG_DIR": str(root / "cfg"),
           "JUPYTER_RUNTIME_DIR": str(root / "run"), "JUPYTERLAB_WORKSPACES_DIR": str(root / "ws")}
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
               f"--port={port}", "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}",
               f"--IdentityProvider.token={token}", "--LabApp.news_url=",
               *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else [])]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start: {' '.join(command)}")
                time.sleep(0.5)
        yield base, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()


@pytest.fixture
def lab_page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("ui", ["lab/tree", "notebooks"], ids=["JupyterLab", "Notebook"])
def test_navigation_opens_the_sibling_notebook_in_jupyter(lab, lab_page, ui, tmp_path):
    """In JupyterLab and in the classic-style Notebook 7, the navigation cell's Next link
    opens the next notebook of the chapter; its "(in Colab)" link names that notebook's
    Colab page."""
    base, token = lab
    first, second = book.chapter_notebooks()[:2]
    title = book.title_of(book.read(second))
    page = lab_page
    page.goto(f"{base}/{ui}/{book.relpath_of(first)}?token={token}")
    link = page.locator(".jp-RenderedMarkdown a", has_text=title).last
    link.wait_for(timeout=WAIT_MS)
    pub = colab.load_publication(ROOT / "pyproject.toml")
    in_colab = page.locator(".jp-RenderedMarkdown a", has_text=colab.COLAB_LINK_TEXT).last
    assert in_colab.get_attribute("href") == pub.colab_url(book.relpath_of(second))
    link.scroll_into_view_if_needed()
    if ui == "notebooks":  # Notebook 7 opens each notebook in its own browser tab
        with page.context.expect_page(timeout=WAIT_MS) as opened:
            link.click()
        page = opened.value
        page.wait_for_url(f"**/notebooks/{book.relpath_of(second)}*", timeout=WAIT_MS)
    else:  # JupyterLab opens it in a new tab of its own, which becomes the current one
        link.click()
        page.wait_for_url(f"**/lab/tree/{book.relpath_of(second)}*", timeout=WAIT_MS)
    page.wait_for_selector(f".jp-RenderedMarkdown h1:has-text({title!r})", timeout=WAIT_MS)
    screenshot(page, tmp_path / f"screenshot-{ui.split('/')[0]}-next.png")


PRESENT_SLIDE = """() => {
  const s = Array.from(document.querySelectorAll('.reveal .slides section.present')).pop();
  return {hash: location.hash, height: s.scrollHeight, shown: s.clientHeight,
          overflow: getComputedStyle(s).overflowY};
}"""


# How long to wait for Space to move on before the slide counts as the last one.
LAST_SLIDE_MS = 2_000


def test_rise_slideshow_scrolls_slides_taller_than_the_screen(lab, lab_page, tmp_path):
    """`make present`: the RISE slideshow of the first notebook at 1280x800. Each slide taller
    than the screen scrolls to its end (the notebook's metadata rise.scroll, stamped by
    tools/colab.py); without it such a slide is cut off. The chapter's own slides are split
    to fit (tools/colab.py), so the lab fixture adds one tall slide to its copy."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    base, token = lab
    page = lab_page
    page.goto(f"{base}/rise/{book.relpath_of(book.chapter_notebooks()[0])}?token={token}")
    page.wait_for_selector(".reveal .slides section.present .jp-Cell", timeout=WAIT_MS)
    page.wait_for_timeout(3000)  # MathJax and the layout settle
    page.mouse.click(640, 60)
    tall, seen = [], []
    for _ in range(200):
        slide = page.evaluate(PRESENT_SLIDE)
        if seen and slide["hash"] == seen[-1]:
            break  # the last slide
        seen.append(slide["hash"])
        if slide["height"] > 800:
            tall.append(slide)
            assert slide["overflow"] in ("auto", "scroll") and slide["shown"] <= 800, slide
            end = page.evaluate("() => { const s = Array.from(document.querySelectorAll("
                                "'.reveal .slides section.present')).pop(); "
                                "s.scrollTop = s.scrollHeight; "
                                "return s.scrollTop + s.clientHeight - s.scrollHeight; }")
            assert end >= -1, f"slide {slide['hash']} does not scroll to its end"
        page.keyboard.press("Space")
        try:  # the next slide's address; on the last slide, none comes
            page.wait_for_function("h => location.hash !== h", arg=slide["hash"],
                                   timeout=LAST_SLIDE_MS)
        except PlaywrightTimeout:
            pass
    assert len(seen) > 5, f"the slideshow did not advance: {seen}"
    assert tall, "no slide taller than 800 px: the check above tested nothing"
    tallest = max(tall, key=lambda s: s["height"])
    page.evaluate(f"location.hash = '{tallest['hash']}'")
    page.wait_for_timeout(1000)
    screenshot(page, tmp_path / "screenshot-rise-tallest.png")
