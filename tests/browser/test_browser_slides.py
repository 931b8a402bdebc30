"""Every slide of every deck fits a 1280x800 screen, in a real browser, offline; the
lecture decks (tools/lecture.py) have at most LECTURE_SCREENS screens, the first shows the
proposition on a slide, and no deck shows an assert.

Apart from tests/browser/test_browser.py, whose page scripts it shares (the fixtures
`browser` and `site` are in tests/browser/browsing.py), because it takes as long as the rest
of that file: `make test` runs each test file on one worker, so the two halves run side by
side.
"""

import pathlib

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import book
import chapter
import colab
import lecture
from test_browser import (
    GO_TO_SLIDE,
    SLIDE_FIT,
    SLIDE_INDICES,
    SLIDE_SETTLED,
    WAIT_MS,
    deck_problems,
    html_of,
    screenshot,
)

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


# The lecture decks: {deck name: ...} as tools/chapter.py writes them into slides/.
LECTURE_FILES = [f"{name}.html" for name in book.LECTURE_DECKS]
LECTURE_SCREENS = 40  # at most, title slide included (issue 31: a 75-minute lecture)
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
    lecture deck has at most LECTURE_SCREENS screens; the first shows PROPOSITION on a
    slide (not only in the notes)."""
    facts = page.evaluate(DECK_FACTS, PROPOSITION)
    problems = [f"{name}: shows code lines starting with assert: {facts['asserts'][:3]}"
                ] if facts["asserts"] else []
    if name in LECTURE_FILES and facts["screens"] > LECTURE_SCREENS:
        problems.append(f"{name}: {facts['screens']} screens, more than {LECTURE_SCREENS}")
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
    far as they are built (test_the_lecture_decks says when they are missing), and each
    deck follows ``lecture_problems``."""
    out, chapter_rels, _ = site
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("requestfailed", lambda r: r.failure != "net::ERR_FILE_NOT_FOUND" or errors.append(
        f"missing file: {r.url}"))
    problems, shrunk, count = [], [], 0
    lectures = [out / "slides" / f for f in LECTURE_FILES if (out / "slides" / f).is_file()]
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
    assert errors == [], errors
    assert not problems, f"{len(problems)} problems in {count} slides at 1280x800:\n" + \
        "\n".join(problems)


def test_the_lecture_decks(site, browser):
    """`make chapter` builds lecture.html and lecture-2.html (tools/lecture.py: the cells
    the authors tag), each within LECTURE_SCREENS screens, the first with the proposition on
    a slide (their fit: test_every_slide_fits_a_1280x800_screen)."""
    out = site[0]
    missing = [f for f in LECTURE_FILES if not (out / "slides" / f).is_file()]
    assert not missing, (f"slides/{missing} not built: no cell of their notebooks is tagged "
                         f"for them (tools/book.py LECTURE_DECKS)")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        problems = []
        for name in LECTURE_FILES:
            open_deck(page, out / "slides" / name)
            problems += lecture_problems(page, name)
    finally:
        page.close()
    assert not problems, "\n".join(problems)


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

    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        found = {}
        # The title slide, "## The task" and the extra "## Part" slides are the screens.
        for case in [("-", 0, False), ("notes", 0, False), ("-", LECTURE_SCREENS - 2, False),
                     ("-", LECTURE_SCREENS - 1, False), ("-", 0, True)]:
            open_deck(page, deck(*case))
            found[case] = lecture_problems(page, LECTURE_FILES[0])
    finally:
        page.close()
    assert found[("-", 0, False)] == []
    assert [p.split(": ")[1] for p in found[("notes", 0, False)]] == [
        f"no slide shows {PROPOSITION!r} (speaker notes do not count)"]
    assert found[("-", LECTURE_SCREENS - 2, False)] == []
    assert found[("-", LECTURE_SCREENS - 1, False)] == [
        f"{LECTURE_FILES[0]}: {LECTURE_SCREENS + 1} screens, more than {LECTURE_SCREENS}"]
    assert len(found[("-", 0, True)]) == 1 and "assert x" in found[("-", 0, True)][0]
