"""The chapter's three notebook widgets on the built site and in the notebooks' decks, in
headless Chromium, opened as files with the network unreachable (issue 46; tools/widgets.py
writes their models and data, site/widgets/widgets.js draws them): notebook 9's head lab
says, for words typed into it (the hidden cases among them: empty, punctuation, digits,
capitals, letters outside a-z, too short, too long), what the notebook's own ``head_lab``
prints, with heads on and off, two seeds, values on and off, and draws PyTorch's maps within
MAP_TOLERANCE, loading the runtime only when first asked; notebook 5's map is
``alignment.alignment_weights`` within ALIGNMENT_TOLERANCE, with Python's messages for bad
words; notebook 1's slider shows what the notebook's ``show_split`` prints. The lab works
from the keyboard, passes axe-core's WCAG 2.1 AA rules, fits a phone's width, and the
widgets work in the decks without moving the slides. Nothing is requested from outside the
site. One page load per page, shared by the tests of that page (module-scoped)."""

import contextlib
import io
import math
import pathlib
import subprocess
import sys
import types

import pytest

import book
import widgets
from d2lutil import alignment, pronunciations, tasks, translator
from test_browser import Tab, accessibility_problems, html_of, screenshot

MAP_TOLERANCE = 1e-4  # float32 of ONNX Runtime Web against PyTorch's, through a translator
ALIGNMENT_TOLERANCE = 1e-5  # one scaled dot-product and softmax
WAIT_MS = 60_000  # for a page, or for the runtime and a model to load
LAB, ALIGNMENT, SPLIT = (book.CHAPTER_DIR + "/" + book.WIDGETS[name]
                         for name in ("head-lab", "alignment", "split"))
PHONE = {"width": 390, "height": 844}

# What a widget shows (widgets.js's DOM): its state, its output line, and its maps, each
# cell as [row label, column label, value] (its <title> is "row → column: 0.83").
STATE = """root => ({
  status: root.dataset.status, runs: Number(root.dataset.runs),
  line: root.querySelector('.cw-text').textContent,
  maps: Array.from(root.querySelectorAll('svg.cw-map')).map(map => ({
    title: map.querySelector('text.cw-title')?.textContent || '',
    label: map.getAttribute('aria-label'),
    cells: Array.from(map.querySelectorAll('rect[data-value]')).map(r => {
      const [where] = r.querySelector('title').textContent.split(/: (?=[^:]*$)/);
      return [...where.split(' \\u2192 '), Number(r.dataset.value)]; })})),
  scales: root.querySelectorAll('svg.cw-scale').length,
})"""
ANSWERED = "([root, runs]) => Number(root.dataset.runs) > runs && root.dataset.status !== 'loading'"
# What of the page lies beyond the window's width, and the widget's maps' boxes.
FIT = """root => ({page: [document.documentElement.scrollWidth, innerWidth],
  outside: Array.from(root.querySelectorAll('*')).filter(e => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && (r.left < -0.5 || r.right > innerWidth + 0.5); })
    .map(e => e.tagName + '.' + e.getAttribute('class')),
  maps: Array.from(root.querySelectorAll('.cw-maps svg')).map(s => {
    const r = s.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })})"""

# (word, seed, heads off, values): 30 words and more, the hidden cases among them; "cim",
# the box's first word, comes first (the runtime loads for it).
LAB_WORDS = [
    ("cim", 0, [], False), ("cell", 0, [], False), ("cell", 0, [0], False),
    ("city", 0, [1, 2], True), ("gem", 0, [3], False), ("knight", 0, [], True),
    ("phone", 0, [0, 1, 2, 3], False), ("thought", 3, [], False),
    ("attention", 3, [2], True), ("translation", 3, [], False),
    ("xylophone", 3, [0, 3], False), ("queue", 0, [], True), ("psychology", 3, [1], True),
    ("zzz", 0, [], False), ("abc", 3, [], False), ("cider", 0, [2], False),
    ("gin", 3, [0], True), ("ceiling", 0, [0, 1], False), ("qwrtpsdfghjk", 3, [], True),
    ("yyyyyyyyyyyy", 0, [], False),  # cut: no <eos> within the longest target
    ("mmmmmmmmmmmm", 0, [1], True), ("xxxxxxxxxxxx", 3, [1, 2], True),  # cut
    ("", 0, [], False), ("it's", 0, [], False), ("c3po", 3, [], False),
    ("Cell", 0, [], False), ("héllo", 0, [1], False), ("ab", 0, [], False),
    ("a" * 13, 3, [], False), ("a" * 200, 0, [], False), (" cat", 0, [], False),
    ("cat\u200b", 0, [], False), ('say "hi"', 0, [], False),  # repr: '\u200b', "'" or '"'
    ("don't say \"no\"", 0, [], False), ("ab\tc", 0, [], False), ("日本語", 3, [], False),
    ("cat😀", 0, [], False), ("cat\u00a0", 3, [], False), ("rate", 3, [3], True),
]
# The Kelvin sign K (U+212A) lower-cases to k, in Python as in JavaScript.
ALIGNMENT_PAIRS = [("kite", "attack"), ("attention", "translation"), ("Query", "KEY"),
                   ("\u212aite", "banana"), ("a", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz")]
ALIGNMENT_BAD = [("at tack", "kite"), ("kite", "R2-D2"), ("", "x"), ("x", ""),
                 ("Kite", "non\u00a0stop")]


def python_says(call, *args):
    """What ``call(*args)`` prints and returns."""
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        returned = call(*args)
    return printed.getvalue().rstrip("\n"), returned


class Notebook9:
    """Notebook 9's own head_lab and draw_lab_maps (its stored cells), for each seed's
    shipped model; show_heatmaps is replaced by a note of what it would draw."""

    def __init__(self):
        self.entries, self.letters, self.phonemes = widgets.dictionary()
        self.labs = {}

    def lab(self, seed):
        if seed not in self.labs:
            model, _ = translator.shipped(seed, self.entries, self.letters, self.phonemes)
            drawn = {}
            namespace = {
                "translator": translator, "pronunciations": pronunciations, "model": model,
                "letters": self.letters, "phonemes": self.phonemes,
                "num_heads": model.decoder.cross_attention.num_heads,
                "d2lutil": types.SimpleNamespace(
                    show_heatmaps=lambda maps, **kwargs: drawn.update(maps=maps, **kwargs)),
                "plt": types.SimpleNamespace(show=lambda: None)}
            exec(widgets.stored_cell("head-lab", "def head_lab("), namespace)
            exec(widgets.stored_cell("head-lab", "def draw_lab_maps("), namespace)
            self.labs[seed] = namespace["head_lab"], drawn
        return self.labs[seed]

    def says(self, word, seed, off, values):
        """(printed line, {maps, titles, rows, cols} or None) of head_lab(word, off, values)."""
        head_lab, drawn = self.lab(seed)
        drawn.clear()
        line, said = python_says(head_lab, word, off, values)
        if said is None:
            return line, None
        return line, {"maps": drawn["maps"][0].numpy(), "titles": drawn["titles"][0],
                      "rows": list(drawn["yticklabels"]), "cols": list(drawn["xticklabels"])}


def map_problems(where, shown, expected, tolerance):
    """How the maps ``shown`` (STATE's) differ from ``expected`` ({maps (n, T, S), titles,
    rows, cols}), and the largest difference of their values."""
    problems, largest = [], 0.0
    if len(shown) != len(expected["maps"]):
        return [f"{where}: {len(shown)} maps, not {len(expected['maps'])}"], math.inf
    for i, (got, want) in enumerate(zip(shown, expected["maps"], strict=True)):
        rows, cols = expected["rows"], expected["cols"]
        cells = [[r, c, float(want[a, b])] for a, r in enumerate(rows) for b, c in enumerate(cols)]
        if expected.get("titles") and got["title"] != expected["titles"][i]:
            problems.append(f"{where}: map {i} titled {got['title']!r}")
        if not got["label"]:
            problems.append(f"{where}: map {i} has no aria-label")
        if [cell[:2] for cell in got["cells"]] != [cell[:2] for cell in cells]:
            problems.append(f"{where}: map {i}'s cells are not rows {rows} by columns {cols}")
            continue
        differences = [abs(g[2] - w[2]) for g, w in zip(got["cells"], cells, strict=True)]
        largest = max(largest, *differences)
        if max(differences) > tolerance:
            problems.append(f"{where}: map {i} differs from PyTorch's by {max(differences):.2e}")
    return problems, largest


def report(problems, most=12):
    """The first ``most`` problems, one a line, and how many more."""
    more = [f"... and {len(problems) - most} more"] if len(problems) > most else []
    return "\n".join(problems[:most] + more)


def offline_problems(tab):
    return ([f"requested outside the site: {u}" for u in tab.remote()]
            + [f"failed: {u}" for u in tab.failed] + [f"JavaScript error: {e}" for e in tab.errors])


@pytest.fixture(scope="module")
def notebook9():
    return Notebook9()


@contextlib.contextmanager
def page_tab(browser, path, name, viewport=None):
    """A tab on ``path``, ready once the widget ``name`` has loaded its data; its root."""
    tab = Tab(browser)
    if viewport:
        tab.page.set_viewport_size(viewport)
    try:
        root = f"document.querySelector('.chapter-widget[data-widget=\"{name}\"]')"
        tab.open(path, f"({root}?.dataset.status || 'loading') !== 'loading'")
        yield tab, tab.page.locator(f'.chapter-widget[data-widget="{name}"]')
        assert offline_problems(tab) == []
    finally:
        tab.close()


@pytest.fixture(scope="module")
def lab_tab(site, browser):
    """Notebook 9's page, its lab not used yet: (Tab, the lab's root)."""
    with page_tab(browser, site[0] / html_of(LAB), "head-lab") as opened:
        yield opened


def answer(root, act, *args):
    """Do ``act(*args)`` and return the widget's STATE once it has answered."""
    runs = root.evaluate("root => Number(root.dataset.runs)")
    act(*args)
    root.page.wait_for_function(ANSWERED, arg=[root.element_handle(), runs], timeout=WAIT_MS)
    return root.evaluate(STATE)


def press_all(locator, keys):
    for key in keys:
        locator.press(key)


# The lab's seed and boxes, set as a reader would leave them (the lab reads them when
# Pronounce is pressed): one call, not six (test_head_lab_by_keyboard uses the keys).
SET_CHOICES = """(root, [seed, on, values]) => {
  root.querySelector('select').value = String(seed);
  const boxes = root.querySelectorAll('input[type=checkbox]');
  on.forEach((checked, i) => { boxes[i].checked = checked; });
  boxes[on.length].checked = values; }"""


def set_lab(root, word, seed, off, values):
    """Type ``word`` into the lab's box, and choose the seed, the heads and values."""
    root.get_by_role("textbox", name="word").fill(word)
    root.evaluate(SET_CHOICES, [seed, [i not in off for i in range(4)], values])


def widget_files(tab):
    """The files of _static/widgets/ the tab has loaded since it opened its page."""
    return sorted(u.rsplit("/", 1)[1] for u in tab.requests if "/_static/widgets/" in u)


def test_head_lab_says_what_notebook_9_says(lab_tab, notebook9):
    """Every word of LAB_WORDS, as head_lab prints it and with PyTorch's maps; the runtime
    and a model load at the first Pronounce, not with the page."""
    tab, root = lab_tab
    page = tab.page
    loaded = page.evaluate("() => Object.keys(window.chapterWidgetAssets).sort()")
    assert loaded == ["data"], f"loaded with the page: {loaded}"
    assert widget_files(tab) == ["data.js", "widgets.css", "widgets.js"], widget_files(tab)
    assert root.get_by_role("textbox", name="word").input_value() == "cim"
    pronounce = root.get_by_role("button", name="Pronounce")
    problems, largest, shown_maps = [], 0.0, 0
    for k, (word, seed, off, values) in enumerate(LAB_WORDS):
        set_lab(root, word, seed, off, values)
        state = answer(root, pronounce.click)
        if k == 0:
            assert page.evaluate("() => typeof window.chapterWidgetAssets.runtime") == "object"
            assert widget_files(tab) == ["data.js", "runtime.js", "translator-seed-0.js",
                                         "widgets.css", "widgets.js"], widget_files(tab)
        where = f"{word!r} (seed {seed}, heads {off} off{', values' if values else ''})"
        line, expected = notebook9.says(word, seed, off, values)
        if state["status"] != "done" or state["line"] != line:
            problems.append(f"{where}: shows {state['line']!r} ({state['status']}), "
                            f"Python prints {line!r}")
            continue
        if expected is None:
            if state["maps"] or state["scales"]:
                problems.append(f"{where}: maps drawn beside a message")
            continue
        found, worst = map_problems(where, state["maps"], expected, MAP_TOLERANCE)
        problems += found
        largest = max(largest, worst)
        shown_maps += len(state["maps"])
        if state["scales"] != 1:
            problems.append(f"{where}: {state['scales']} colour bars")
    assert not problems, report(problems)
    assert shown_maps >= 4 * 20
    print(f"\nhead lab: {len(LAB_WORDS)} words, maps within {largest:.1e} of PyTorch's")
    assert offline_problems(tab) == []


def focused(locator):
    return locator.evaluate("e => e === document.activeElement")


def test_head_lab_by_keyboard(site, lab_tab, notebook9):
    """Tab reaches the word box, Enter pronounces, Space switches a head off, Enter on the
    button pronounces again; then axe-core finds nothing serious on the page."""
    tab, root = lab_tab
    page = tab.page
    set_lab(root, "cim", 0, [], False)
    word = root.get_by_role("textbox", name="word")
    root.click(position={"x": 3, "y": 3})  # the panel's edge, before its first control
    page.keyboard.press("Tab")
    assert focused(word), "Tab does not reach the word box"
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type("city")
    state = answer(root, page.keyboard.press, "Enter")
    assert state["line"] == notebook9.says("city", 0, [], False)[0]
    head = [root.get_by_role("checkbox", name=f"head {i}", exact=True) for i in range(4)]
    after_word = [root.get_by_role("combobox", name="seed"), *head,
                  root.get_by_role("checkbox", name="values"),
                  root.get_by_role("button", name="Pronounce")]
    for k, control in enumerate(after_word):  # the order of the controls, by Tab
        page.keyboard.press("Tab")
        assert focused(control), f"Tab {k + 1} after the word box misses {control}"
        if control == head[1]:
            page.keyboard.press("Space")
            assert not head[1].is_checked()
    state = answer(root, page.keyboard.press, "Enter")
    assert state["line"] == notebook9.says("city", 0, [1], False)[0]
    assert state["line"].endswith("(heads [1] off)") and len(state["maps"]) == 4
    assert root.locator(".cw-text").get_attribute("aria-live") == "polite"
    screenshot(page, site[0].parent / "screenshot-head-lab.png")
    assert accessibility_problems(page, html_of(LAB)) == []


def test_head_lab_at_a_phone_width(site, lab_tab, notebook9):
    """At 390 px the lab's controls, maps and messages wrap: nothing scrolls sideways, and
    every map is drawn on the screen at a readable size."""
    tab, root = lab_tab
    page = tab.page
    pronounce = root.get_by_role("button", name="Pronounce")
    page.set_viewport_size(PHONE)
    try:
        set_lab(root, "translation", 0, [], False)
        state = answer(root, pronounce.click)
        assert state["line"] == notebook9.says("translation", 0, [], False)[0]
        root.scroll_into_view_if_needed()
        fit = root.evaluate(FIT)
        assert fit["page"][0] <= fit["page"][1], f"the page scrolls sideways: {fit['page']}"
        assert fit["outside"] == [], fit["outside"]
        assert len(fit["maps"]) == 5  # 4 heads and the colour bar
        assert all(left >= 0 and width >= 150 for left, _, width, _ in fit["maps"][:4]), fit
        root.screenshot(path=site[0].parent / "screenshot-head-lab-phone.png")
        # A message naming a 200-letter word wraps too.
        root.get_by_role("textbox", name="word").fill("a" * 200)
        state = answer(root, pronounce.click)
        assert state["line"] == notebook9.says("a" * 200, 0, [], False)[0]
        fit = root.evaluate(FIT)
        assert fit["page"][0] <= fit["page"][1] and fit["outside"] == [], fit
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


def test_alignment_map_is_pythons(site, browser):
    """Notebook 5's page: five word pairs drawn as alignment.alignment_weights, and bad
    words answered with Python's message, Enter in a box drawing as the button does."""
    with page_tab(browser, site[0] / html_of(ALIGNMENT), "alignment") as (tab, root):
        boxes = [root.get_by_role("textbox", name=name) for name in ("query_word", "key_word")]
        assert [b.input_value() for b in boxes] == widgets.first_words("alignment")
        button = root.get_by_role("button")
        problems, largest = [], 0.0
        for query, key in ALIGNMENT_PAIRS:
            boxes[0].fill(query)
            boxes[1].fill(key)
            state = answer(root, button.click)
            weights = alignment.alignment_weights(query, key)
            expected = {"maps": weights[None].numpy(), "rows": list(query.lower()),
                        "cols": list(key.lower())}
            found, worst = map_problems(f"{query!r}, {key!r}", state["maps"], expected,
                                        ALIGNMENT_TOLERANCE)
            problems += found
            largest = max(largest, worst)
            assert state["scales"] == 1 and state["status"] == "done"
        assert not problems, report(problems)
        assert accessibility_problems(tab.page, html_of(ALIGNMENT)) == []
        for k, (query, key) in enumerate(ALIGNMENT_BAD):
            boxes[0].fill(query)
            boxes[1].fill(key)
            state = answer(root, boxes[k % 2].press, "Enter")
            with pytest.raises(ValueError) as error:
                alignment.alignment_weights(query, key)
            assert state["line"] == f"{type(error.value).__name__}: {error.value}"
            assert state["maps"] == [] and state["scales"] == 0
        print(f"\nalignment: {len(ALIGNMENT_PAIRS)} pairs within {largest:.1e} of PyTorch's")


def show_split_lines():
    """Notebook 1's show_split (its stored cell) as a function returning what it prints,
    and the output stored for the notebook's cell ``show_split(0.95)``."""
    namespace = {"math": math, "tasks": tasks}
    exec(widgets.stored_cell("split", "def show_split"), namespace)
    (stored,) = [c for c in book.read(book.ROOT / SPLIT).cells
                 if c.cell_type == "code" and c.source.strip() == "show_split(0.95)"]
    printed = "".join(o.get("text", "") for o in stored.outputs if o.output_type == "stream")
    return (lambda a1: python_says(namespace["show_split"], a1)[0]), printed.rstrip("\n")


def test_split_slider_shows_what_show_split_prints(site, browser):
    """Notebook 1's page: the slider, moved with the keyboard to five stops, shows what the
    notebook's show_split prints there (at 0.95: the stored output of its plain call)."""
    show_split, stored = show_split_lines()
    with page_tab(browser, site[0] / html_of(SPLIT), "split") as (tab, root):
        slider = root.get_by_role("slider", name="alpha_1")
        state = root.evaluate(STATE)
        assert slider.input_value() == "0.7" and state["line"] == show_split(0.7)
        shown = {}
        for keys, at in [(["Home"], 0.5), (["ArrowRight"], 0.55), (["End"], 1.0),
                         (["ArrowLeft"], 0.95), (["ArrowLeft"] * 4, 0.75)]:
            state = answer(root, press_all, slider, keys)
            assert float(slider.input_value()) == pytest.approx(at)
            shown[at] = state["line"]
            assert state["line"] == show_split(at), at
        assert shown[0.95] == stored
        assert tab.page.evaluate("() => window.chapterWidgetAssets.runtime") is None


# The deck's current slide, and whether the widget lies within the 1280x800 screen.
ON_SLIDE = """root => { const r = root.getBoundingClientRect(); const i = Reveal.getIndices();
  return {slide: [i.h, i.v || 0], inside: r.top >= -1 && r.bottom <= innerHeight + 1
          && r.left >= -1 && r.right <= innerWidth + 1}; }"""
TO_WIDGET = """root => { const i = Reveal.getIndices(root.closest('section'));
  Reveal.configure({transition: 'none'}); Reveal.slide(i.h, i.v); }"""


@contextlib.contextmanager
def deck_tab(browser, site, rel, name):
    """The deck of notebook ``rel`` at 1280x800, on the slide of its widget ``name``: (Tab,
    the widget's root); it checks that the slide has not moved when done."""
    deck = site[0] / "slides" / pathlib.Path(html_of(rel)).name
    with page_tab(browser, deck, name, {"width": 1280, "height": 800}) as (tab, root):
        tab.page.wait_for_function("window.Reveal && Reveal.isReady()", timeout=WAIT_MS)
        tab.page.evaluate(TO_WIDGET, root.element_handle())
        tab.page.wait_for_timeout(300)  # the deck's fit, after the slide changed
        before = root.evaluate(ON_SLIDE)
        assert before["inside"], f"{deck.name}: the widget is not on the screen"
        yield tab, root
        assert root.evaluate(ON_SLIDE) == {"slide": before["slide"], "inside": True}, deck.name


def test_head_lab_in_its_deck(site, browser, notebook9):
    """Notebook 9's deck: the lab works on its slide, the keys typed into it (p, n, Space,
    Enter) do not move the deck, and its answers fit the screen, the largest maps too."""
    with deck_tab(browser, site, LAB, "head-lab") as (tab, root):
        box = root.get_by_role("textbox", name="word")
        box.fill("")
        box.press_sequentially("pin")  # p and n move a deck
        head = root.get_by_role("checkbox", name="head 2", exact=True)
        head.focus()
        tab.page.keyboard.press("Space")  # so does Space
        assert not head.is_checked()
        state = answer(root, box.press, "Enter")
        assert state["line"] == notebook9.says("pin", 0, [2], False)[0]
        assert len(state["maps"]) == 4
        screenshot(tab.page, site[0].parent / "screenshot-head-lab-deck.png")
        assert root.evaluate(ON_SLIDE)["inside"]
        box.fill("yyyyyyyyyyyy")  # 16 rows by 12 letters: cut at the longest target
        state = answer(root, box.press, "Enter")
        assert state["line"] == notebook9.says("yyyyyyyyyyyy", 0, [2], False)[0]
        assert len(state["maps"]) == 4


def test_split_slider_in_its_deck(site, browser):
    """Notebook 1's deck: the slider works on its slide, and its arrow keys do not move the
    deck."""
    with deck_tab(browser, site, SPLIT, "split") as (_, root):
        slider = root.get_by_role("slider", name="alpha_1")
        state = answer(root, slider.press, "ArrowRight")
        assert slider.input_value() == "0.75"
        assert state["line"] == show_split_lines()[0](0.75)


def test_the_benchmark_runs_on_the_built_site(site):
    """benchmarks/widget_pages.py as benchmarks/README.md runs it, on this site, at its
    smallest (one round, one further word, no throttling): it prints its row."""
    out, _, _ = site
    run = subprocess.run([sys.executable, str(book.ROOT / "benchmarks" / "widget_pages.py"),
                          "--site", str(out), "--runs", "1", "--rounds", "1",
                          "--throttle", "1"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    row = next(line for line in run.stdout.splitlines() if line.startswith("| x1"))
    assert row.count(" MB") == 2 and row.count(" s") >= 2, run.stdout
