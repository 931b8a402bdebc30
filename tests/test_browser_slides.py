"""Every slide of every deck fits a 1280x800 screen, in a real browser, offline.

Apart from tests/test_browser.py, whose page scripts it shares (the fixtures `browser` and
`site` are in tests/browsing.py), because it takes as long as the rest of that file:
`make test` runs each test file on one worker, so the two halves run side by side.
"""

import pathlib

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


def test_every_slide_fits_a_1280x800_screen(site, browser):
    """Each deck loads offline with its figures and links (``deck_problems``), and each
    slide of each deck, at 1280x800: nothing lies outside the screen (a slide taller
    than the deck is shrunk, to at most chapter.SLIDE_MIN_ZOOM, and then it must fit), no
    code or output scrolls sideways, and outputs never wrap (a printed table keeps its
    columns; a line too long for the slide would scroll, and fail). The slide types that
    split a notebook into slides come from tools/colab.py stamp."""
    out, chapter_rels, _ = site
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("requestfailed", lambda r: r.failure != "net::ERR_FILE_NOT_FOUND" or errors.append(
        f"missing file: {r.url}"))
    problems, shrunk, count = [], [], 0
    try:
        for rel in chapter_rels:
            deck = out / "slides" / pathlib.Path(html_of(rel)).name
            page.goto(deck.as_uri())
            page.wait_for_function("window.Reveal && Reveal.isReady() && window.MathJax && "
                                   "MathJax.Hub && MathJax.Hub.queue.pending === 0",
                                   timeout=WAIT_MS)
            page.evaluate(NO_DELAYS)
            problems += deck_problems(page, out, deck.name)  # figures, links, the site
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
                if rel == chapter_rels[0] and (h, v) in {(0, 0), (2, 0)}:
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
