"""Every slide of every deck fits a 1280x800 screen, in a real browser, offline; the
lecture decks (tools/lecture.py) are built, each has at most the screens book.DECK_SCREENS
gives it, the first shows the proposition on a slide, and no deck shows an assert. A file
apart from test_browser.py, so that `make test`'s two workers run the two side by side."""

import pathlib

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import book
import chapter
import colab
import lecture
from test_browser import WAIT_MS, html_of, local_target, screenshot

# Every slide of a deck, as [h, v] for Reveal.slide.
SLIDE_INDICES = """() => Reveal.getSlides().map(s => { const i = Reveal.getIndices(s);
  return [i.h, i.v || 0]; })"""
# The deck's script marks a slide with data-zoom once it has fitted it (on "ready" for the
# first slide, on "slidechanged" for the others).
GO_TO_SLIDE = """([h, v]) => {
  const i = Reveal.getIndices();
  if (i.h === h && (i.v || 0) === v) { return; }
  document.querySelectorAll('section[data-zoom]').forEach(s => s.removeAttribute('data-zoom'));
  Reveal.slide(h, v);
}"""
SLIDE_SETTLED = ("Reveal.getCurrentSlide().hasAttribute('data-zoom') && "
                 "MathJax.Hub.queue.pending === 0")
# What of the current slide lies outside the window or scrolls sideways; how much the deck's
# script shrank it to fit (data-zoom); how its outputs wrap.
SLIDE_FIT = """() => {
  const s = Reveal.getCurrentSlide();
  const name = e => (e.innerText || e.alt || e.tagName).trim().split('\\n')[0].slice(0, 60);
  const outside = [], sideways = [];
  const parts = 'p, li, pre, img, table, h1, h2, h3, h4, .MathJax_Display, .MathJax_CHTML';
  for (const e of s.querySelectorAll(parts)) {
    if (e.closest('aside.notes')) { continue; }
    const r = e.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) { continue; }
    if (r.left < -1 || r.top < -1 || r.right > innerWidth + 1 || r.bottom > innerHeight + 1) {
      outside.push([name(e), Math.round(r.left), Math.round(r.top), Math.round(r.right),
                    Math.round(r.bottom)]);
    }
  }
  for (const e of s.querySelectorAll('pre, .jp-OutputArea-output, .jp-InputArea-editor, '
                                     + '.MathJax_Display')) {
    if (e.scrollWidth > e.clientWidth + 1) {
      sideways.push([name(e), e.scrollWidth, e.clientWidth]);
    }
  }
  const wrapping = Array.from(s.querySelectorAll('.jp-OutputArea-output pre, .jp-InputArea pre'))
    .map(e => getComputedStyle(e).whiteSpace).filter(w => w !== 'pre');
  // Measured with its formulas laid out: each TeX source has its typeset formula beside it.
  const shown = e => !e.closest('aside.notes');
  const typeset = Array.from(s.querySelectorAll('.MathJax_CHTML')).filter(shown)
    .filter(e => e.getBoundingClientRect().width > 0).length;
  const untypeset = Array.from(s.querySelectorAll('script[type^="math/tex"]')).filter(shown)
    .length - typeset;
  return {zoom: Number(s.dataset.zoom), outside, sideways, wrapping, untypeset, typeset,
          title: (s.querySelector('h1, h2, h3, p, pre')?.innerText || '').slice(0, 50)};
}"""


def deck_problems(page, out, name):
    """What is wrong with the open deck ``name`` of the site in ``out``: too few slides,
    MathJax errors, figures that did not load or have no alt text, links to missing files,
    no link to the site."""
    problems = []
    if page.evaluate("document.querySelectorAll('.reveal .slides section').length") <= 1:
        problems.append(f"{name}: one slide or none")
    if page.evaluate("document.querySelectorAll('.MathJax_Error').length"):
        problems.append(f"{name}: MathJax errors")
    images = page.eval_on_selector_all(
        "img", "is => is.map(i => [i.getAttribute('src').slice(0, 40), i.complete && "
               "i.naturalWidth > 0, i.getAttribute('alt')])")
    problems += [f"{name}: image {src} did not load" for src, ok, _ in images if not ok]
    problems += [f"{name}: image {src} has no alt text" for src, _, alt in images if not alt]
    links = page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)")
    targets = {local_target(h) for h in links}
    problems += [f"{name}: link to missing {h}" for h in links
                 if local_target(h) is not None and not local_target(h).exists()]
    if out / "index.html" not in targets:
        problems.append(f"{name}: no link to the site")
    return problems

# Reveal's transitions, and the pauses MathJax makes between its phases so that a browser
# can paint in between (processSectionDelay, 50 ms a phase: about 0.2 s of the 0.25 s each
# slide took): neither changes where a slide's content ends up once it has settled.
NO_DELAYS = """() => {
  Reveal.configure({transition: 'none', backgroundTransition: 'none'});
  MathJax.Hub.processSectionDelay = 0;
  MathJax.Hub.processUpdateDelay = 0;
}"""


# One round trip to the browser a slide, not three: go to the slide, wait (a frame at a
# time) until the deck's script has fitted it and MathJax is done, and measure it.
VISIT_SLIDE = f"""async ([h, v, waitMs]) => {{
  ({GO_TO_SLIDE})([h, v]);
  const deadline = performance.now() + waitMs;
  while (!({SLIDE_SETTLED})) {{
    if (performance.now() > deadline) {{ throw new Error(`slide ${{h}}/${{v}} did not settle`); }}
    await new Promise(requestAnimationFrame);
  }}
  return ({SLIDE_FIT})();
}}"""


# The lecture decks as tools/chapter.py writes them into slides/, and {file: the most screens
# it may have}, title slide included (book.DECK_SCREENS; issue 31: a 75-minute lecture).
LECTURE_FILES = [f"{name}.html" for name in book.LECTURE_DECKS]
LECTURE_SCREENS = {f"{name}.html": book.DECK_SCREENS[name] for name in book.LECTURE_DECKS}
PROPOSITION = "Proposition"  # what the first lecture shows on a slide, not in its notes

# The open deck's screens (leaf <section> elements), the leaf sections whose text outside
# the speaker notes holds `word`, and its displayed code lines that start with "assert".
DECK_FACTS = """(word) => {
  const leaves = Array.from(document.querySelectorAll('.reveal .slides section'))
    .filter(s => !s.querySelector('section'));
  const onSlide = leaves.filter(s => {
    const shown = s.cloneNode(true);
    shown.querySelectorAll('aside.notes').forEach(a => a.remove());
    return shown.textContent.includes(word);
  }).length;
  const asserts = Array.from(document.querySelectorAll('.jp-InputArea-editor'))
    .flatMap(e => e.textContent.split('\\n')).map(l => l.trim())
    .filter(l => /^assert\\b/.test(l));
  return {screens: leaves.length, onSlide, asserts};
}"""


def open_deck(page, deck):
    page.goto(deck.as_uri())
    page.wait_for_function("window.Reveal && Reveal.isReady() && window.MathJax && "
                           "MathJax.Hub && MathJax.Hub.queue.pending === 0", timeout=WAIT_MS)
    page.evaluate(NO_DELAYS)


def lecture_problems(page, name):
    """What the open deck ``name`` breaks of the lecture rules: any deck shows no assert; a
    lecture deck has at most the screens LECTURE_SCREENS gives it; the first shows
    PROPOSITION on a slide (not only in the notes)."""
    facts = page.evaluate(DECK_FACTS, PROPOSITION)
    problems = [f"{name}: shows code lines starting with assert: {facts['asserts'][:3]}"
                ] if facts["asserts"] else []
    if name in LECTURE_SCREENS and facts["screens"] > LECTURE_SCREENS[name]:
        problems.append(f"{name}: {facts['screens']} screens, more than "
                        f"{LECTURE_SCREENS[name]}")
    if name == LECTURE_FILES[0] and not facts["onSlide"]:
        problems.append(f"{name}: no slide shows {PROPOSITION!r} (speaker notes do not count)")
    return problems


def test_every_slide_fits_a_1280x800_screen(site, browser):
    """Each deck loads offline with its figures and links (``deck_problems``), and each
    slide of each deck, at 1280x800: nothing lies outside the screen (a slide taller
    than the deck is shrunk, to at most chapter.SLIDE_MIN_ZOOM, and then it must fit), no
    code or output scrolls sideways, and outputs never wrap (a printed table keeps its
    columns; a line too long for the slide would scroll, and fail). The slide types that
    split a notebook into slides come from tools/colab.py stamp. The lecture decks too, as
    deck follows ``lecture_problems``; the first deck shows a typeset formula."""
    out, chapter_rels, _ = site
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("requestfailed", lambda r: r.failure != "net::ERR_FILE_NOT_FOUND" or errors.append(
        f"missing file: {r.url}"))
    problems, shrunk, count, formulas = [], [], 0, 0
    lectures = [out / "slides" / f for f in LECTURE_FILES]
    missing = [f for f in LECTURE_FILES if not (out / "slides" / f).is_file()]
    assert not missing, (f"slides/{missing} not built: no cell of their notebooks is tagged "
                         f"for them (tools/book.py LECTURE_DECKS)")
    try:
        for rel, deck in [*((None, d) for d in lectures),
                          *((r, out / "slides" / pathlib.Path(html_of(r)).name)
                            for r in chapter_rels)]:
            open_deck(page, deck)
            problems += deck_problems(page, out, deck.name)  # figures, links, the site
            problems += lecture_problems(page, deck.name)
            for h, v in page.evaluate(SLIDE_INDICES):
                fit = page.evaluate(VISIT_SLIDE, [h, v, WAIT_MS])
                count += 1
                where = f"{deck.name}#/{h}/{v} ({fit['title']!r})"
                if fit["outside"]:
                    problems.append(f"{where}: cut off (zoom {fit['zoom']}): {fit['outside'][:3]}")
                if fit["sideways"]:
                    problems.append(f"{where}: scrolls sideways: {fit['sideways'][:3]}")
                if fit["untypeset"]:
                    problems.append(f"{where}: {fit['untypeset']} formulas not typeset")
                if fit["wrapping"]:
                    problems.append(f"{where}: code or output wraps ({fit['wrapping'][:1]})")
                formulas += fit["typeset"] if rel == chapter_rels[0] else 0
                if fit["zoom"] < 1:
                    shrunk.append((fit["zoom"], deck, h, v))
                if rel in (None, chapter_rels[0]) and (h, v) in {(0, 0), (2, 0)}:
                    screenshot(page, out.parent / f"screenshot-slide-{deck.stem}-{h}-{v}.png")
        if shrunk:  # the slide shown smallest
            zoom, deck, h, v = min(shrunk, key=lambda x: x[0])
            page.goto(deck.as_uri() + f"#/{h}/{v}")
            page.wait_for_function("window.Reveal && Reveal.isReady()", timeout=WAIT_MS)
            page.wait_for_function(SLIDE_SETTLED, timeout=WAIT_MS)
            screenshot(page, out.parent / "screenshot-slide-smallest.png")
    finally:
        context.close()
    assert count > 5 * len(chapter_rels), f"only {count} slides seen"
    assert formulas, f"no slide of {html_of(chapter_rels[0])} shows a typeset formula"
    assert errors == [], errors
    assert not problems, f"{len(problems)} problems in {count} slides at 1280x800:\n" + \
        "\n".join(problems)


def test_the_lecture_checks_on_a_made_up_deck(browser, tmp_path, monkeypatch):
    """lecture_problems passes a lecture deck that follows the rules and names each rule a
    deck breaks: the proposition only in the notes, too many screens, a shown assert."""
    pub = colab.Publication("https://github.com/example-owner/example-chapter", "main")
    tag = book.LECTURE_DECKS[0]

    def deck(proposition_type, extra_slides, with_assert):
        proof = new_markdown_cell(f"**{PROPOSITION}.** One head cannot.")
        if proposition_type == "notes":  # the speaker notes of "## The task"
            proof.metadata["tags"] = [book.NOTES_TAG]
        cells = [new_markdown_cell("# One head"), new_markdown_cell("## The task"),
                 proof, new_code_cell("x = 1\n" + ("assert x\n" if with_assert else "") + "x"),
                 *(new_markdown_cell(f"## Part {i}") for i in range(extra_slides))]
        for cell in cells[1:]:
            cell.metadata.setdefault("tags", []).append(tag)
        root = tmp_path / f"{proposition_type}-{extra_slides}-{with_assert}"
        (root / "notebooks").mkdir(parents=True)
        nbformat.write(new_notebook(cells=cells), root / "notebooks" / "01_one.ipynb")
        with monkeypatch.context() as m:
            if with_assert:  # as if the build did not strip it
                m.setattr(lecture, "strip_asserts", lambda source: source)
            chapter.write_slides(lecture.deck_notebook(root, "lecture", pub), pub,
                                 "notebooks/lecture.ipynb", {}, out, name=f"{root.name}.html")
        return out / "slides" / f"{root.name}.html"

    out = tmp_path / "out"
    chapter.copy_assets(chapter.SLIDE_ASSETS, out / "slides" / "assets")
    cap = LECTURE_SCREENS[LECTURE_FILES[0]]  # the first deck's most screens

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        found = {}
        # The title slide, "## The task" and the extra "## Part" slides are the screens.
        for case in [("-", 0, False), ("notes", 0, False), ("-", cap - 2, False),
                     ("-", cap - 1, False), ("-", 0, True)]:
            open_deck(page, deck(*case))
            found[case] = lecture_problems(page, LECTURE_FILES[0])
    finally:
        page.close()
    assert found[("-", 0, False)] == []
    assert [p.split(": ")[1] for p in found[("notes", 0, False)]] == [
        f"no slide shows {PROPOSITION!r} (speaker notes do not count)"]
    assert found[("-", cap - 2, False)] == []
    assert found[("-", cap - 1, False)] == [
        f"{LECTURE_FILES[0]}: {cap + 1} screens, more than {cap}"]
    assert len(found[("-", 0, True)]) == 1 and "assert x" in found[("-", 0, True)][0]
