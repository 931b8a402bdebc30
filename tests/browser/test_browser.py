"""The chapter's site and slides in headless Chromium, offline (network unreachable), built
once from the stored outputs (``tools/chapter.py build --no-execute``; fixtures in
browsing.py): what a reader relies on, on every page (sidebar, outline, search, typeset
formulas, figures with alt text, links, buttons, no Colab setup cell, a note for each
widget, axe-core's WCAG 2.1 AA rules with no "serious" or "critical" violation, nothing
requested from outside the site, nothing scrolling sideways at 1280), and the menus at a
phone's and a laptop's width. The decks: test_browser_slides.py; JupyterLab, Notebook 7
and RISE: test_browser_jupyter.py. Screenshots are written next to the built site (also
into CHAPTER_SCREENSHOTS=DIR when set)."""

import itertools
import os
import pathlib
import re
import shutil
import urllib.parse
import urllib.request

import pytest

import book
import chapter
import colab
import plan
from browsing import skip_or_fail

ROOT = book.ROOT
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
WAIT_MS = 30_000  # for a page to load and typeset
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
LOCAL_SCHEMES = ("file:", "data:", "about:", "blob:")


class Tab:
    """One offline page that records every request it makes."""

    def __init__(self, browser):
        self.context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.requests = []
        self.errors = []
        self.failed = []  # e.g. a file the site lacks (MathJax's config/Safe.js once)
        self.context.on("request", lambda r: self.requests.append(r.url))
        self.context.on("requestfailed", self.on_failed)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def on_failed(self, request):
        # A file the page asks for and the site lacks (other failures under Chromium's
        # offline mode, of files that load all the same, are not counted).
        if request.failure == "net::ERR_FILE_NOT_FOUND":
            self.failed.append(request.url)

    def open(self, path, ready="true"):
        """Load ``path`` (a file, maybe with ?query) and wait until the JS ``ready`` holds."""
        self.requests.clear()
        url = path if isinstance(path, str) else path.as_uri()
        self.page.goto(url)
        self.page.wait_for_function(f"document.readyState === 'complete' && !!({ready})",
                                    timeout=WAIT_MS)
        return self.page

    def remote(self):
        return [u for u in self.requests if not u.startswith(LOCAL_SCHEMES)]

    def close(self):
        self.context.close()


@pytest.fixture
def tab(browser):
    t = Tab(browser)
    yield t
    assert t.remote() == [], f"requests outside the site: {t.remote()}"
    assert t.failed == [], f"requests that failed: {t.failed}"
    assert t.errors == [], f"JavaScript errors: {t.errors}"
    t.close()


def screenshot(page, path):
    page.screenshot(path=path)
    target = os.environ.get("CHAPTER_SCREENSHOTS")
    if target:
        pathlib.Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, pathlib.Path(target) / path.name)


def html_of(rel):
    return rel[: -len(".ipynb")] + ".html"


def local_target(url):
    """The file a file:// link points at (without its #anchor), or None for other links."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme != "file":
        return None
    return pathlib.Path(urllib.parse.unquote(parsed.path))


# Formulas typeset (a page without any loads no MathJax).
MATH_DONE = ("document.querySelectorAll('.math').length === "
             "document.querySelectorAll('.math mjx-container').length")

PAGE_STATE = """() => ({
  sidebar: Array.from(document.querySelectorAll('.bd-docs-nav a.reference'))
      .map(a => [a.closest('ul').previousElementSibling?.innerText || '', a.innerText.trim(),
                 a.href]),
  outline: Array.from(document.querySelectorAll('#pst-page-toc-nav a'))
      .map(a => a.innerText.trim()),
  math: document.querySelectorAll('.math').length,
  typeset: document.querySelectorAll('.math mjx-container').length,
  mathErrors: document.querySelectorAll('mjx-merror').length,
  rawMath: Array.from(document.querySelectorAll('article p, article li'))
      .filter(e => /\\$[^$\\s][^$]*\\$|\\\\\\(|\\\\\\[/.test(e.innerText)).map(e => e.innerText),
  images: Array.from(document.querySelectorAll('article img')).map(i => ({
      src: i.getAttribute('src'), alt: i.getAttribute('alt') || '',
      loaded: i.complete && i.naturalWidth > 0})),
  links: Array.from(document.querySelectorAll('a[href]')).map(a => [a.innerText.trim(), a.href]),
  prev: document.querySelector('.prev-next-area a.left-prev')?.href || '',
  next: document.querySelector('.prev-next-area a.right-next')?.href || '',
  download: Array.from(document.querySelectorAll('a.btn-download-source-button'))
      .map(a => a.href),
  text: document.querySelector('article').innerText,
  widgetNotes: document.querySelectorAll('.widget-note').length,
  browserWidgets: Array.from(document.querySelectorAll('.chapter-widget'))
      .map(w => w.dataset.widget),
  headings: Array.from(document.querySelectorAll('article h1, article h2, article h3, '
      + 'article h4, article h5, article h6')).map(h => [Number(h.tagName[1]), h.innerText]),
})"""


WIDE_BLOCKS = """() => Array.from(document.querySelectorAll(
    'article pre, article div.highlight, article .cell_output > *'))
  .filter(e => e.scrollWidth > e.clientWidth)
  .map(e => [e.closest('.cell')?.querySelector('pre')?.innerText.split('\\n')[0] || '',
             e.scrollWidth, e.clientWidth])"""

# A code block of ``n`` characters on one line, after the first code block of the page.
ADD_LINE = """n => { const first = document.querySelector('div.cell_input div.highlight');
  const copy = first.cloneNode(true); copy.classList.add('probe');
  const pre = copy.querySelector('pre'); pre.textContent = 'W'.repeat(n);
  first.after(copy); return pre.scrollWidth > pre.clientWidth; }"""


def state_of(tab, path):
    """What a reader finds on the page at ``path``; ``wide``: its code blocks and outputs
    that scroll sideways at the tab's 1280 px ([first line, scrollWidth, clientWidth])."""
    page = tab.open(path, MATH_DONE)
    return {**page.evaluate(PAGE_STATE), "wide": page.evaluate(WIDE_BLOCKS)}


def accessibility_problems(page, where, everything=False):
    """axe-core's violations of impact "serious" or "critical" on the open page.

    Code (Pygments' spans) and formulas (MathJax's) are most of a page's elements and most
    of axe's time, and they are drawn the same way on every page: they are checked in full
    on one page (``everything``) and elsewhere only for what depends on the page, whether
    a code block that scrolls can be reached with the keyboard.
    """
    if not AXE.is_file():
        skip_or_fail("node_modules/axe-core is missing: run `npm ci`")
    page.add_script_tag(path=str(AXE))
    results = page.evaluate("""async ([tags, everything]) => {
      // Only violations are read: axe then skips collecting the elements that pass.
      const rules = {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']};
      if (everything) { return [await axe.run(document, rules)]; }
      const lean = {include: [document], exclude: [['div.highlight'], ['mjx-container']]};
      const scroll = {runOnly: {type: 'rule', values: ['scrollable-region-focusable']},
                      resultTypes: ['violations']};
      return [await axe.run(lean, rules), await axe.run(document, scroll)];  // one at a time
    }""", [AXE_TAGS, everything])
    return [f"{where}: {v['id']} ({v['impact']}): {v['help']}; {len(v['nodes'])} element(s), "
            f"e.g. {[n['target'] for n in v['nodes'][:3]]}"
            for result in results
            for v in result["violations"] if v["impact"] in ("serious", "critical")]


def notation_rows(path):
    """The words of the table in the notebook's cell tagged book.NOTATION_TAG (none without
    one), as the page shows them: each table cell's text between its formulas (typeset,
    they are not compared), without code and emphasis marks or link targets."""
    cells = [c for c in book.read(path).cells if book.NOTATION_TAG in book.tags(c)]
    words = []
    for line in cells[0].source.splitlines() if cells else []:
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line.strip().strip("|"))
        for part in re.split(r"\$[^$]*\$|\|", re.sub(r"[`*]", "", text)):
            if part.split():
                words.append(" ".join(part.split()))
    return words


def test_index_lists_the_chapter_in_order_with_solutions_and_slides(site, tab):
    out, chapter_rels, solution_rels = site
    state = state_of(tab, out / "index.html")
    screenshot(tab.page, out.parent / "screenshot-index.png")
    sidebar = [(group, local_target(href)) for group, _, href in state["sidebar"]]
    chapter_pages = [t for g, t in sidebar if g == "Chapter"]
    solution_pages = [t for g, t in sidebar if g == "Solutions"]
    assert chapter_pages == [out / html_of(rel) for rel in chapter_rels], state["sidebar"]
    assert solution_pages == [out / html_of(rel) for rel in solution_rels], state["sidebar"]
    decks = [local_target(href) for _, href in state["links"] if "/slides/" in href]
    # The lecture decks built (tools/lecture.py; tests/browser/test_browser_slides.py wants
    # both), above the deck of each notebook.
    lectures = [out / "slides" / f"{name}.html" for name in book.LECTURE_DECKS
                if (out / "slides" / f"{name}.html").is_file()]
    assert decks == lectures + [out / "slides" / pathlib.Path(html_of(rel)).name
                                for rel in chapter_rels]
    assert all(d.is_file() for d in decks)
    notation = notation_rows(ROOT / chapter_rels[0])
    # Sphinx's smart quotes curl the apostrophes: they are compared straight.
    text = " ".join(tab.page.inner_text("main").replace("\u2019", "'").split())
    assert [w for w in notation if w not in text] == [], "the notation table is not shown"
    assert state["wide"] == [], state["wide"]
    assert accessibility_problems(tab.page, "index.html") == []


@pytest.mark.parametrize("kind", ["chapter", "solutions"])
def test_every_page(site, tab, kind):
    """Each page of the kind: outline, formulas, figures, links, buttons, no setup cell,
    accessibility."""
    out, chapter_rels, solution_rels = site
    pub = colab.load_publication(ROOT / "pyproject.toml")
    rels = chapter_rels if kind == "chapter" else solution_rels
    order = [out / "index.html"] + [out / html_of(r) for r in chapter_rels + solution_rels]
    problems = []  # accessibility, reported for all pages at once
    for rel in rels:
        page = out / html_of(rel)
        state = state_of(tab, page)
        where = html_of(rel)
        if rel == chapter_rels[0] or (kind == "solutions" and rel == rels[0]):
            screenshot(tab.page, out.parent / f"screenshot-{pathlib.Path(where).stem}.png")
        # The outline of the page: its sections, down to Recap, Exercises and References.
        if kind == "chapter":
            assert state["outline"][-3:] == ["Recap", "Exercises", "References"], where
        # Headings in order: one title, and no level skipped on the way down.
        levels = [level for level, _ in state["headings"]]
        assert levels[:1] == [1] and levels.count(1) == 1, (where, state["headings"])
        skips = [h for (a, _), h in itertools.pairwise(state["headings"]) if h[0] > a + 1]
        assert not skips, f"{where}: headings that skip a level: {skips}"
        # Code and outputs fit the page (test_code_and_outputs_fit_the_page_at_1280).
        assert state["wide"] == [], f"{where}: blocks that scroll sideways: {state['wide']}"
        # Formulas: every one typeset, none left as raw TeX.
        assert state["typeset"] == state["math"], f"{where}: untypeset formulas"
        assert state["mathErrors"] == 0 and state["rawMath"] == [], (where, state["rawMath"])
        # Figures load and say what they show; the Colab badge is a local image.
        for image in state["images"]:
            assert image["loaded"], f"{where}: image {image['src']} did not load"
            assert image["alt"] and not image["alt"].endswith((".png", ".svg")), \
                f"{where}: image {image['src']} without alt text (cell metadata mystnb.image.alt)"
        badges = [i for i in state["images"] if i["alt"] == book.BADGE_ALT]
        assert len(badges) == 1 and not badges[0]["src"].startswith("http"), where
        # Every link to a file resolves; the navigation cell links the site's pages.
        for text, href in state["links"]:
            target = local_target(href)
            assert target is None or target.exists(), f"{where}: link {text!r} to {href}"
        colab_links = [h for _, h in state["links"] if h.startswith(book.COLAB_PREFIX)]
        assert set(colab_links) == {pub.colab_url(rel)}, \
            f"{where}: Colab links other than the launch button and badge: {colab_links}"
        i = order.index(page)
        assert local_target(state["prev"]) == order[i - 1], where
        if i + 1 < len(order):
            assert local_target(state["next"]) == order[i + 1], where
        assert [local_target(h) for h in state["download"]] == [out / "_sources" / rel], where
        assert book.read(out / "_sources" / rel) == book.read(ROOT / rel), \
            f"{where}: the download button gives another notebook than {rel}"
        # What only makes sense in a live notebook: no setup cell; each widget is its
        # browser version where its cell names one (tools/widgets.py), else a note.
        assert "google.colab" not in state["text"], f"{where}: the Colab setup cell shows"
        assert "interactive(children=" not in state["text"], f"{where}: a raw widget"
        widgets = [book.widget_name(c) for c in book.read(ROOT / rel).cells
                   for o in c.get("outputs", []) if book.WIDGET_MIME in o.get("data", {})]
        assert state["browserWidgets"] == [w for w in widgets if w], where
        assert state["widgetNotes"] == widgets.count(None), where
        if kind == "chapter":
            deck = out / "slides" / pathlib.Path(where).name
            assert any(local_target(h) == deck for _, h in state["links"]), \
                f"{where}: no link to its slides"
        # The navigation cell links the site's pages, not Colab's nor the .ipynb files.
        if rel == chapter_rels[0]:
            title = book.title_of(book.read(ROOT / chapter_rels[1]))
            nav = [local_target(h) for t, h in state["links"] if t == title]
            assert nav[-1:] == [out / html_of(chapter_rels[1])], nav
        assert colab.COLAB_LINK_TEXT not in [t for t, _ in state["links"]], where
        assert "(in Colab)" not in state["text"], where
        assert not [h for _, h in state["links"] if h.startswith("file:")
                    and h.endswith(".ipynb") and "/_sources/" not in h], where
        problems += accessibility_problems(tab.page, where, everything=rel == chapter_rels[0])
    assert not problems, "\n".join(problems)


def test_teaching_plan_page(site, tab):
    """The teaching plan (course/plan.py): in the sidebar, a row and a section per notebook
    linking its page, every local link resolving, headings in order, accessible."""
    out, chapter_rels, solution_rels = site
    page = out / f"{chapter.PLAN_PAGE}.html"
    state = state_of(tab, page)
    screenshot(tab.page, out.parent / "screenshot-teaching-plan.png")
    assert [(g, local_target(h)) for g, _, h in state["sidebar"] if g == "Teaching"] == [
        ("Teaching", page)], state["sidebar"]
    # The first table: one row per notebook, then the totals.
    rows = tab.page.eval_on_selector(
        "article table", "t => Array.from(t.querySelectorAll('tbody tr'))"
                         ".map(r => r.querySelector('a')?.href || r.innerText)")
    assert [local_target(h) for h in rows[:-1]] == [out / html_of(r) for r in chapter_rels]
    assert rows[-1].startswith(f"All {len(chapter_rels)} notebooks"), rows[-1]
    titles = [book.title_of(book.read(ROOT / rel)) for rel in chapter_rels]
    straight = str.maketrans("“”‘’", "\"\"''")  # Sphinx's smart quotes
    course = plan.course_headings(plan.chapter_facts().plan)
    assert [h.translate(straight) for level, h in state["headings"] if level == 2] == [
        *course, "Grading the homework", *titles]
    # The figure of which notebook builds on which, with its alt text; the quiz's answers
    # folded until the instructor opens them.
    (figure,) = tab.page.eval_on_selector_all(
        "article img", "is => is.map(i => [i.alt, i.naturalWidth])")
    assert figure[0].startswith("Which notebook builds on which") and figure[1] > 0, figure
    assert tab.page.eval_on_selector_all("article details", "ds => ds.map(d => d.open)") == [
        False] * len(plan.load_course().quiz)
    levels = [level for level, _ in state["headings"]]
    assert levels[:1] == [1] and all(b <= a + 1 for a, b in itertools.pairwise(levels))
    targets = {local_target(h) for _, h in state["links"]}
    assert {out / html_of(r) for r in chapter_rels + solution_rels} <= targets
    for text, href in state["links"]:
        target = local_target(href)
        assert target is None or target.exists(), f"link {text!r} to {href}"
    assert any(text == "course/README.md" and href.endswith("/course/README.md")
               for text, href in state["links"]), "the plan links the grading guide"
    assert state["typeset"] == state["math"] and state["rawMath"] == [], state["rawMath"]
    assert state["wide"] == [], state["wide"]
    assert accessibility_problems(tab.page, page.name) == []


def test_search_works_from_file_urls(site, tab):
    out, chapter_rels, _ = site
    page = tab.open(str((out / "search.html").as_uri()) + "?q=softmax",
                    "document.querySelectorAll('#search-results li').length > 0")
    screenshot(page, out.parent / "screenshot-search.png")
    found = page.eval_on_selector_all("#search-results li a", "as => as.map(a => a.href)")
    assert any(local_target(h) in {out / html_of(r) for r in chapter_rels} for h in found), found
    assert accessibility_problems(page, "search.html") == []


# --- the menus, at a phone's width and a laptop's ----------------------------------------------

SIDEBARS = """() => {
  const shown = e => { if (!e) { return false; }
    const r = e.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || r.right <= 0 || r.left >= innerWidth) { return false; }
    const hit = document.elementFromPoint(Math.min(r.left + r.width / 2, innerWidth - 1),
                                          Math.min(r.top + 10, innerHeight - 1));
    return !!hit && (e.contains(hit) || hit.contains(e)); };
  const current = Array.from(document.querySelectorAll('.bd-docs-nav a.current'))
  return {navigation: current.length > 0 && current.every(shown),
          outline: shown(document.querySelector('#pst-page-toc-nav a')),
          primaryDialog: !!document.querySelector('#pst-primary-sidebar-modal')?.open,
          secondaryDialog: !!document.querySelector('#pst-secondary-sidebar-modal')?.open};
}"""


def visible_button(page, selector):
    buttons = page.locator(f"{selector}:visible")
    assert buttons.count() == 1, f"{buttons.count()} visible {selector} buttons"
    return buttons.first


def test_menu_buttons_open_the_navigation_on_a_phone(site, browser):
    """At 390x844 the sidebar and the outline are hidden; the visible ≡ button opens the
    chapter's navigation (the current page's link can be clicked) and "On this page" opens
    the outline."""
    out, chapter_rels, _ = site
    t = Tab(browser)
    try:
        t.page.set_viewport_size({"width": 390, "height": 844})
        page = t.open(out / html_of(chapter_rels[0]), MATH_DONE)
        assert page.evaluate(SIDEBARS) == {"navigation": False, "outline": False,
                                           "primaryDialog": False, "secondaryDialog": False}
        visible_button(page, ".primary-toggle").click()
        page.wait_for_function(f"({SIDEBARS})().navigation", timeout=5000)
        screenshot(page, out.parent / "screenshot-phone-navigation.png")
        page.keyboard.press("Escape")
        page.wait_for_function(f"!({SIDEBARS})().primaryDialog", timeout=5000)
        visible_button(page, ".secondary-toggle").click()
        page.wait_for_function(f"({SIDEBARS})().outline", timeout=5000)
        screenshot(page, out.parent / "screenshot-phone-outline.png")
        assert t.errors == [] and t.remote() == [] and t.failed == []
    finally:
        t.close()


def test_at_1280_the_menu_hides_the_sidebar_and_a_too_long_line_is_seen(site, tab):
    """At 1280 the navigation is shown beside the text; ≡ hides it and shows it again. Every
    page's visit asserts that no code block or output scrolls sideways (``state_of``'s
    ``wide``); here, that the measure can fail: a line of the notebooks' length (and one
    more) fits, a line of 100 does not."""
    import hygiene

    out, chapter_rels, _ = site
    page = tab.open(out / html_of(chapter_rels[0]), MATH_DONE)
    state = page.evaluate(SIDEBARS)
    assert state["navigation"] and state["outline"], state
    button = visible_button(page, ".primary-toggle")
    button.click()
    page.wait_for_function(f"!({SIDEBARS})().navigation", timeout=5000)
    assert not page.evaluate(SIDEBARS)["primaryDialog"]
    button.click()
    page.wait_for_function(f"({SIDEBARS})().navigation", timeout=5000)
    limit = hygiene.MAX_LINE
    assert page.evaluate(ADD_LINE, limit) is False, f"a {limit}-character line scrolls"
    assert page.evaluate(ADD_LINE, limit + 1) is False
    assert page.evaluate(ADD_LINE, 100) is True
    assert page.evaluate(WIDE_BLOCKS) != []
    page.evaluate("document.querySelectorAll('.probe').forEach(e => e.remove())")
    assert page.evaluate(WIDE_BLOCKS) == []
    screenshot(page, out.parent / "screenshot-code-1280.png")


def test_offline_check_catches_a_remote_request(site, tab):
    """The request log sees a page that loads something remote (the check can fail)."""
    page = site[0].parent / "remote.html"
    page.write_text('<img src="https://example.org/x.png"><script>fetch("//cdn.example.org/y.js")'
                    '.catch(() => 0)</script>')
    tab.open(page)
    tab.page.wait_for_timeout(300)
    assert re.search(r"example\.org/x\.png", " ".join(tab.remote()))
    tab.requests.clear()
