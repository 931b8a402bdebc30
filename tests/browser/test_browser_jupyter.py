"""Where a student or lecturer runs the notebooks: JupyterLab (with jupyterlab-rise) on a
loopback port over a copy of notebooks/. In JupyterLab and Notebook 7 the navigation cell's
Next link opens the next notebook; in the RISE slideshow of `make present` at 1280x800 every
slide taller than the screen scrolls to its end; a lecture of `make lecture`, opened as
`make present` opens it, runs every cell in JupyterLab, then as RISE slides on that kernel.
A file apart from test_browser.py, so that `make test`'s two workers run the two side by
side."""

import ast
import os
import re
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
import lecture
from test_browser import ROOT, WAIT_MS, screenshot


@pytest.fixture(scope="module")
def lab_root(tmp_path_factory):
    """The folder the ``lab`` fixture's JupyterLab serves, as `make lab` and `make present`
    serve the repository: a copy of notebooks/ in it, and what a test writes there."""
    return tmp_path_factory.mktemp("lab")


@pytest.fixture(scope="module")
def lab(browser, lab_root):
    """(base URL, token) of JupyterLab with jupyterlab-rise, listening on the loopback only,
    serving ``lab_root``, with a copy of notebooks/ (the tracked notebooks stay untouched)."""
    root = lab_root
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


# `make lecture` and `make present` as a user runs them (the venv taken as it is).
MAKE = ["make", "--no-print-directory", "-o", ".venv/.installed"]
# The lecture presented live: the first, the one the Makefile's help names (lecture-2 takes
# about as long: ~10 s of compute each).
LIVE_LECTURE = book.LECTURE_DECKS[0]
# "Restart the kernel and run all cells": ~15 s here (kernel start, ~10 s of compute, 80-odd
# cells rendered), generous for two shared cores. A shown cell run live: a second.
RUN_ALL_MS = 300_000
RUN_CELL_MS = 120_000
# The notebook panel of the file at ``rel`` (its tab's title names the path), or null.
PANEL = """rel => {
  const tab = Array.from(document.querySelectorAll('.lm-DockPanel-tabBar .lm-TabBar-tab'))
    .find(t => (t.title || '').split('\\n').includes('Path: ' + rel));
  return tab ? document.getElementById(tab.dataset.id) : null;
}"""
# A cell's output that shows an error (JupyterLab renders an error as stderr).
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
ERROR_OUTPUT = f'{STDERR}:has-text("Error"), {STDERR}:has-text("Traceback")'
# In that panel: the kernel's status, the code cells' prompts ("[3]:", "[*]:", "[ ]:") and
# how many outputs show an error; ``done`` once the kernel is idle with nothing queued and
# every cell run, or an error stopped Run All.
RUN_STATE = f"""rel => {{
  const panel = ({PANEL})(rel);
  const status = panel.querySelector('.jp-Notebook-ExecutionIndicator');
  const prompts = Array.from(panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt'))
    .map(p => p.textContent.trim());
  const errors = Array.from(panel.querySelectorAll('{STDERR}'))
    .filter(o => /Error|Traceback/.test(o.textContent)).length;
  const idle = !!status && status.dataset.status === 'idle' && !prompts.includes('[*]:');
  const ran = prompts.length > 0 && prompts.every(p => /^\\[\\d+\\]:$/.test(p));
  return {{status: status && status.dataset.status, prompts, errors,
           done: idle && (ran || errors > 0)}};
}}"""
# A cell's prompt once it shows an execution count other than ``before``.
RAN_AGAIN = """([prompt, before]) => { const p = prompt.textContent.trim();
  return /^\\[\\d+\\]:$/.test(p) && p !== before; }"""


def present_url(nb):
    """The address `make present NB=nb` opens JupyterLab at (the Makefile's rule, dry run)."""
    dry = subprocess.run([*MAKE, "-n", "present", f"NB={nb}"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    found = re.search(r"--LabApp\.default_url=(\S+)", dry.stdout)
    assert dry.returncode == 0 and found, dry.stdout + dry.stderr
    return found.group(1)


def names(source):
    """(the names the code binds, anywhere in it; the names it reads)."""
    tree = ast.parse(source)
    bound = {alias.asname or alias.name.split(".")[0] for node in ast.walk(tree)
             if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    bound |= {node.name for node in ast.walk(tree)
              if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    bound |= {node.id for node in ast.walk(tree)
              if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    read = {node.id for node in ast.walk(tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    return bound, read


def test_a_lecture_runs_in_jupyterlab_then_live_as_rise_slides(lab, lab_root, lab_page,
                                                               tmp_path):
    """`make lecture`, then `make present NB=build/lecture/lecture.ipynb` as documented
    (Makefile, CONTRIBUTING.md): JupyterLab opens the lecture as a notebook; its toolbar's
    "Restart the kernel and run all cells" runs every cell, those the slideshow skips too,
    without an error; Alt+R shows the RISE slides, and on them, a few slides on, the first
    shown code cell, which needs names that only skipped cells define, runs live (Shift+Enter)
    on the kernel that ran them."""
    base, token = lab
    page = lab_page
    # `make lecture` into the lab's root, where `make present` finds it in the repository.
    made = subprocess.run([*MAKE, "lecture", f"LECTURE_OUT={lab_root / lecture.LIVE_DIR}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stdout + made.stderr
    rel = f"{lecture.LIVE_DIR}/{LIVE_LECTURE}.ipynb"
    url = present_url(rel)
    assert url == f"/lab/tree/{rel}", f"make present opens {url}, not the lecture in the lab"
    nb = book.read(lab_root / rel)
    code = [c for c in nb.cells if c.cell_type == "code"]
    skipped = [c for c in code if c.metadata["slideshow"]["slide_type"] == "skip"]
    shown = next(c for c in code if c not in skipped)  # the first code on a slide
    defined = set().union(*(names(c.source)[0] for c in skipped))
    needs = sorted(names(shown.source)[1] & defined - names(shown.source)[0])
    assert needs, f"the first shown code cell needs nothing the slideshow skips: {shown.source}"

    # JupyterLab on the lecture, as a notebook: Restart the kernel and run all cells.
    page.goto(f"{base}{url}?token={token}")
    page.wait_for_function(f"({PANEL})({rel!r}) !== null", timeout=WAIT_MS)
    panel = page.locator(f"#{page.evaluate(f'({PANEL})({rel!r}).id')}")
    panel.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(
        timeout=WAIT_MS)
    panel.locator("[data-command='notebook:restart-run-all']").click()
    restart = page.locator(".jp-Dialog .jp-mod-accept")  # "Restart Kernel?"
    restart.wait_for(timeout=WAIT_MS)
    restart.click()
    start = time.monotonic()
    page.wait_for_function(f"({RUN_STATE})({rel!r}).done", timeout=RUN_ALL_MS)
    print(f"\n{rel}: Run All in {time.monotonic() - start:.0f} s")
    screenshot(page, tmp_path / "screenshot-lecture-run-all.png")
    errors = panel.locator(ERROR_OUTPUT)
    assert errors.count() == 0, f"cells of {rel} failed: {errors.all_inner_texts()[:2]}"
    state = page.evaluate(f"({RUN_STATE})({rel!r})")
    assert len(state["prompts"]) == len(code), state
    assert all(re.fullmatch(r"\[\d+\]:", p) for p in state["prompts"]), state
    count = max(int(p[1:-2]) for p in state["prompts"])  # the kernel's count after Run All

    # Alt+R (the notebook focused, in command mode): the RISE slideshow, beside it.
    panel.locator(".jp-Cell .jp-InputPrompt").first.click()
    page.keyboard.press("Escape")
    page.keyboard.press("Alt+r")
    iframe = page.locator(f"iframe[src*='/rise/{rel}']")
    iframe.wait_for(timeout=WAIT_MS)
    rise = iframe.element_handle().content_frame()
    rise.wait_for_selector(".reveal .slides section.present .jp-Cell", timeout=WAIT_MS)
    page.wait_for_timeout(3000)  # MathJax and the layout settle

    # Space, slide by slide, to the screen (a leaf section) that shows the first shown code.
    cell = rise.locator(".reveal .slides section.present:not(.stack) .jp-CodeCell"
                        f"[data-windowed-list-index='{nb.cells.index(shown)}']")
    seen = [rise.evaluate("location.hash")]
    while cell.count() == 0:
        assert len(seen) < 10, f"no slide of {seen} shows the cell {shown.source!r}"
        page.keyboard.press("Space")
        rise.wait_for_function("h => location.hash !== h", arg=seen[-1], timeout=WAIT_MS)
        seen.append(rise.evaluate("location.hash"))
    assert len(seen) > 2, f"the slideshow did not move: {seen}"
    assert cell.locator(".cm-line").first.text_content() == shown.source.split("\n")[0]
    # RISE selects the screen's first shown cell; Shift+Enter runs it, live.
    rise.wait_for_function("e => e.classList.contains('jp-mod-active')",
                           arg=cell.element_handle(), timeout=WAIT_MS)
    prompt = cell.locator(".jp-InputArea-prompt")
    before = prompt.text_content().strip()
    page.keyboard.press("Shift+Enter")
    rise.wait_for_function(RAN_AGAIN, arg=[prompt.element_handle(), before],
                           timeout=RUN_CELL_MS)
    page.wait_for_timeout(1000)  # its outputs render
    outputs = cell.locator(".jp-OutputArea-output")
    text = " ".join(outputs.all_text_contents())
    screenshot(page, tmp_path / "screenshot-lecture-rise.png")
    assert "NameError" not in text and "Traceback" not in text, (
        f"{shown.source!r} failed in the slideshow, whose kernel has not run the skipped "
        f"cells that define {needs}: {text[:300]}")
    assert outputs.count() > 0, f"{shown.source!r} showed no output in the slideshow"
    after = int(prompt.text_content().strip()[1:-2])
    assert after > count, (f"{shown.source!r} ran as [{after}] in the slideshow: not on the "
                           f"kernel that ran all {len(code)} cells (up to [{count}])")
