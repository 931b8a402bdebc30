"""The browser tests' fixtures: headless Chromium with the network unreachable
(``browser``, one per test file) and the chapter's site built once from the stored outputs
(``site``, one for the whole run).

Used by the tests of tests/browser/, which its conftest.py gives these fixtures. Without
Chromium the tests are skipped locally; with the environment variable CI set, they fail.
"""

import contextlib
import io
import os
import shutil

import filelock
import pytest

import book
import chapter


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def skip_or_fail(message):
    if os.environ.get("CI"):
        pytest.fail(message + ", and CI is set, so the browser test must run here")
    pytest.skip(message)


@pytest.fixture(scope="session")
def chromium():
    """The path of the system's Chromium, with Playwright to drive it (else a skip)."""
    path = find_chromium()
    if path is None:
        skip_or_fail("chromium is not installed")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        skip_or_fail("playwright is not installed (pip install -r requirements.txt)")
    return path


@pytest.fixture(scope="module")
def browser(chromium):
    """Chromium for one test file. Per file, not per session: Playwright's event loop runs
    while it is open, and nbclient, which the notebooks' tests run on the same worker,
    cannot start its own beside it; so a browser file can run in any place of the order
    (root conftest.py, LONGEST_FIRST)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        # --host-resolver-rules: no host name resolves, so nothing outside the site can load;
        # except 127.0.0.1, where the JupyterLab tests below start their own server.
        b = p.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])
        yield b
        b.close()


@pytest.fixture(scope="session")
def site(chromium, tmp_path_factory):
    """(built site folder, chapter relpaths, solutions relpaths), built once (and not at all
    when the test is skipped for want of a browser).

    Under pytest-xdist the workers share one build: the first to get here builds it into
    the run's common temporary folder while the others wait on a file lock.
    """
    chapter_rels = [book.relpath_of(p) for p in book.chapter_notebooks()]
    solution_rels = [book.relpath_of(p) for p in book.solution_notebooks()]
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return build_site(tmp_path_factory.mktemp("chapter")), chapter_rels, solution_rels
    shared = tmp_path_factory.getbasetemp().parent  # this run's folder, common to workers
    with filelock.FileLock(shared / "site.lock"):
        done = shared / "site.built"
        if not done.exists():
            (shared / "chapter").mkdir(exist_ok=True)
            build_site(shared / "chapter")
            done.touch()
    return shared / "chapter" / "site", chapter_rels, solution_rels


def build_site(folder):
    out = folder / "site"
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        status = chapter.cmd_build(out, execute_notebooks=False)
    assert status == 0, f"tools/chapter.py build failed:\n{printed.getvalue()}"
    print(f"\nbuilt site and screenshots in {out}")
    return out
