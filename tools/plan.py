"""The site's teaching plan page, made from the notebooks' own facts at `make chapter` time.

tools/chapter.py build calls :func:`chapter_facts` (before anything runs: a missing fact
stops the build at once, with a :class:`PlanError` saying where to fix it) and then
:func:`write_page`, which writes ``teaching_plan.md`` into the site's sources (the template
is ``teaching_plan.md.j2`` beside this file) and, beside it, the figure of which notebook
builds on which (``MAP_FIGURE``, drawn with matplotlib, no network).

For each chapter notebook (tools/book.py finds them) the page gives:

* minutes to read: the words of its Markdown prose (the References section and the
  navigation cell left out, a formula counted as one word, link targets and HTML tags
  dropped) at ``WORDS_PER_MINUTE``, rounded up;
* seconds to run: its budget in ``NOTEBOOK_BUDGET_S`` of ``benchmarks/report.py``, the one
  home of the notebooks' measured times (a fresh kernel on a 2-core CPU like Colab's), read
  as a literal (that module imports torch); a notebook without a budget stops the build
  with a message saying where to add it;
* the cells to run live in class: the code cells its authors tagged ``live-PURPOSE``
  (book.LIVE_PREFIX), each named by its tag and the heading of the section it sits in;
* its exercises: the ``Exercise`` objects of the module its import cell names
  (``from d2lutil.exercises.nbNN import ...``, found as tools/grade.py finds it), each with
  its ``max_points``; a checked exercise suits homework graded by `make grade`, an
  open-ended one (no checked parts) carries no points. An exercise the notebook numbers but
  no module checks is listed as open-ended.

The course (``COURSE``, the tables below: edit them there) turns that inventory into a plan
for this chapter (book.ROOT; another chapter, such as the tests' demo chapter, gets the
inventory alone unless a :class:`Course` is passed):

* the lectures, one per deck of book.LECTURE_DECKS (tools/lecture.py builds the decks): parts
  with minutes that add up to the lecture's, each with its screens of the deck
  (``lecture.screen_ranges``); a deck with no tagged cell stops the build;
* the labs (a lab whose notebook does not exist yet is left out);
* what to say at each live cell (``LIVE_CELLS``: every tag in it must be on exactly one code
  cell, and every ``live-`` tag of a notebook must be in it);
* each notebook's learning objectives (the bullets of its ``## What you will learn``
  section, read from the notebook) and the exercises that assess them
  (``OBJECTIVE_EXERCISES``, by the bullets' and exercises' numbers, both checked);
* prerequisites: D2L's sections by name (``D2L_SECTIONS``) and the mathematics, and which
  notebook builds on which (``BUILDS_ON``, also drawn as a figure with alt text);
* the misconceptions students bring and where the chapter answers them, by notebook and
  section heading (``MISCONCEPTIONS``: a heading no longer in the notebook stops the build,
  with the notebook's headings in the message);
* a concept quiz (``QUIZ``), its answers folded, for the instructor to project.

Nothing here runs a notebook: it reads the stored notebooks, so the plan is known (and a
missing budget, tag or heading reported) before the build executes anything.
"""

import ast
import dataclasses
import importlib
import math
import pathlib
import re
import textwrap

import jinja2

import book
import grade
import lecture

PAGE = "teaching_plan"  # the page's name in the site's sources (teaching_plan.md)
TEMPLATE = pathlib.Path(__file__).with_name("teaching_plan.md.j2")
MAP_FIGURE = "teaching_plan_map.png"  # the figure of which notebook builds on which
# A careful reading of technical prose, with its formulas, code and figures to look at:
# about half the pace of everyday prose (some 240 words a minute).
WORDS_PER_MINUTE = 120
BUDGETS_FILE = "benchmarks/report.py"
BUDGETS_NAME = "NOTEBOOK_BUDGET_S"
README_SECTION = "README.md#grading-a-class"  # "## Grading a class", as GitHub anchors it
STATEMENT_CHARS = 100  # an exercise is shown by its first sentences, this long at least
OBJECTIVES_HEADING = "## What you will learn"
# The page's sections on the course, after one per lecture (``PlannedLecture.heading``); the
# labs' only when a lab's notebook exists (``course_headings``).
HEADINGS = {"labs": "Labs", "live": "Cells to run live", "map": "Which notebook builds on which",
            "misconceptions": "Misconceptions students bring", "quiz": "A concept quiz"}
LECTURE_MINUTES = 75

_FORMULA = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.DOTALL)
_WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")
_ITEM = re.compile(r"(?m)^(\d+)\.\s+(.*(?:\n(?!\s*\n|\d+\.\s).*)*)")
_SPAN = re.compile(r"`[^`]*`|\$[^$]*\$")
_SENTENCE_END = re.compile(r"[.?!](?=\s|$)")
_HEADING = re.compile(r"^(#{2,3}) +(.+?)\s*#*\s*$")
_BULLET = re.compile(r"^\s{0,3}(?:[-*+]|\d+[.)])\s+(.*)$")


class PlanError(ValueError):
    """A fact the plan needs is missing or malformed; the message says where to fix it."""


# --- the course: this chapter's plan (edit these tables; the build checks them) ------------

@dataclasses.dataclass(frozen=True)
class Part:
    """A part of a lecture: its minutes, what it covers and the notebooks whose tagged cells
    it shows (their screens of the deck); a part with no notebook (questions, the recap)
    shows no screen."""

    minutes: int
    topic: str
    notebooks: tuple = ()


@dataclasses.dataclass(frozen=True)
class Lecture:
    deck: str  # its deck in book.LECTURE_DECKS
    title: str
    parts: tuple
    minutes: int = LECTURE_MINUTES


@dataclasses.dataclass(frozen=True)
class Misconception:
    belief: str  # what students bring
    answer: str  # what the chapter shows instead, one or two sentences
    where: tuple  # ((notebook number, the heading of the section that shows it), ...)


@dataclasses.dataclass(frozen=True)
class Question:
    question: str
    answer: str  # true of the chapter: say where it shows it
    notebooks: tuple  # the notebooks that answer it, by number


@dataclasses.dataclass(frozen=True)
class Course:
    lectures: tuple
    labs: dict  # {notebook number: what the lab does}; a missing notebook is left out
    live: dict  # {tag: (purpose, what to say: one sentence)}
    objectives: dict  # {notebook number: {objective number (from 1): [exercise numbers]}}
    builds_on: dict  # {notebook number: (the notebooks it builds on, by number)}
    prerequisites: dict  # {notebook number: ((D2L section, what of it), ...), (maths, ...))}
    misconceptions: tuple
    quiz: tuple


LECTURES = (
    Lecture("lecture", "The first lecture", (
        Part(18, "Why one head is not enough: one head hands on one convex mixture of the "
                 "values; the proposition and its proof, on the slides; the error is the same "
                 "for every split.", ("01",)),
        Part(12, "Two heads suffice: the readout inverts the heads' mixing matrix, so the "
                 "heads need different weights, not sharp ones; the rank law "
                 "$1 - \\operatorname{rank}(\\mathbf{A})/k$; one head against two in "
                 "training.", ("02",)),
        Part(20, "Multi-head attention built: one $d \\times d$ projection for all heads, a "
                 "loop over heads, then the heads folded into the batch; the reshape, the "
                 "wrong reshape and the `repeat` bug; parameters and FLOPs that do not "
                 "depend on $h$.", ("03",)),
        Part(12, "One module, three wirings: self-, cross- and causal attention; one output "
                 "row per query; padding and causality as `valid_lens`.", ("04",)),
        Part(8, "Reading a map: sharp, split and diffuse rows; a diffuse row can mean "
                "\"nothing relevant\".", ("05",)),
        Part(5, "Questions from the quiz below, and the homework."),
    )),
    Lecture("lecture-2", "The second lecture", (
        Part(35, "Heads that learn to split the work: a sequence version of copy-both; one "
                 "head stalls at $1/2$, two or four solve it; what the heads look at; which "
                 "heads matter, switched off with `head_mask` and refitted.", ("06",)),
        Part(35, "Sharing keys and values: grouped-query attention and what heads that share "
                 "values can still hand on; the KV cache, one token projected per step; what "
                 "the cache holds and what sharing saves.", ("07",)),
        Part(5, "Questions from the quiz below, and the homework."),
    )),
)

LABS = {
    "08": "Train the chapter's own encoder-decoder on the CMU Pronouncing Dictionary, from "
          "spelling to sound: notebook 4's wiring and notebook 7's KV cache in a real model.",
    "09": "Read the heads of notebook 8's translator by measurement: against an EM "
          "alignment and rules that read no letter, by switching heads off and by swapping "
          "one head between two words, each with its control, and over six trained models.",
    "10": "Debugging multi-head attention: the bugs of notebooks 3 and 4, found and fixed.",
}

# {tag: (purpose, what to say)}: the cells to run live, one tag on one code cell each.
LIVE_CELLS = {
    "live-flat-error": (
        "One head loses half, at every split",
        "Move the split anywhere: the readout of one mixture keeps the same error, "
        "$\\sqrt{1/2}$, as the proposition says."),
    "live-one-vs-two-heads": (
        "One head against two, in training",
        "One head stalls at a relative squared error of $1/2$ while two heads fall far "
        "below it: gradient descent finds two different mixtures by itself."),
    "live-reshape": (
        "Where each head's numbers go: the fold of 0 to 23",
        "Read row $ih + j$ as head $j$ of sequence $i$: the heads of one sequence sit next "
        "to each other, which is why `valid_lens` is repeated in place."),
    "live-wrong-reshape": (
        "The classic wrong reshape: heads split without the transpose",
        "The shapes come out right, yet each \"head\" holds pieces of different positions: "
        "a shape check cannot catch it, comparing values can."),
    "live-repeat-bug": (
        "The silent `repeat` bug",
        "`repeat` hands heads the lengths of other sequences: no error is raised, only "
        "those heads' outputs change, so test values, not shapes."),
    "live-cross-shapes": (
        "Cross-attention: queries and keys of different lengths",
        "Ask for the output's length before you run it: one row per query, whatever the "
        "number of keys, and padded keys get a weight of exactly 0."),
    "live-causal-map": (
        "Causal attention: one valid length per query",
        "Causal attention is self-attention with valid lengths $1, 2, \\ldots, n$, one per "
        "query: every weight above the diagonal is 0, and the first query puts all of its "
        "weight on itself."),
    "live-heatmap": (
        "An alignment you can read",
        "Have the class predict each row first: one partner gives a sharp row, two "
        "identical partners split it, no partner leaves it diffuse."),
    "live-ablation": (
        "Switching heads off with `head_mask`",
        "Every head costs at least its share of what the heads hand on, and the readout, "
        "trained with all of them, keeps using the others in the old way: plain ablation "
        "measures reliance, not content."),
    "live-kv-cache": (
        "Decoding with and without a KV cache",
        "Without a cache every step projects the whole prefix again; with one it projects "
        "only the new token, and the outputs agree."),
    "live-training": (
        "Training the translator",
        "Run the warm-up's 50 steps live, then load the whole run; while the loss falls, "
        "draw the wiring: causal self-attention over the phonemes so far, cross-attention "
        "from the phonemes to the letters."),
    "live-head-lab": (
        "The head lab: a word of the class's choice, heads switched off",
        "Let the class pick a word and switch heads off: what changes in the pronunciation "
        "tests what a head's map only suggests."),
}

# {notebook: {objective: [exercises]}}: objective n is the n-th bullet of the notebook's
# "## What you will learn", exercise n the n-th item of its "## Exercises". An objective
# left out is shown as assessed by no exercise. The comments say what each bullet was about
# when this was written: re-map when a notebook's bullets change.
OBJECTIVE_EXERCISES = {
    # 1 one head, the copy-both task; 2 one mixture, half the error (proof); 3 least
    # squares confirms it for every split; 4 (Going deeper) which readouts the bound
    # covers, errors on training and held-out samples
    "01": {1: [3], 2: [1, 2, 3], 3: [2]},
    # 1 two different heads recover both; 2 the readout inverts the mixing matrix;
    # 3 the rank law; 4 gradient descent finds it
    "02": {1: [3], 2: [2, 3], 3: [1]},
    # 1 heads combine; 2 one d x d projection, a loop over heads becomes the class;
    # 3 the reshape, the wrong reshape, repeat_interleave; 4 same numbers as the others;
    # 5 parameters and FLOPs do not depend on h
    "03": {2: [1], 3: [3], 5: [1, 2]},
    # 1 the wiring decides; 2 output shapes; 3 valid_lens: padding, causality, cross-
    # attention needs only padding; 4 (Going deeper) keys of another width, a query with
    # no valid key
    "04": {3: [1], 4: [2, 3]},
    # 1 a map known in advance; 2 sharp and split rows; 3 a regime by largest weight and
    # entropy; 4 a diffuse row (exercise 3: the mirror lesson, a sharp row); 5 (Going
    # deeper) enough dimensions
    "05": {1: [1], 2: [1], 3: [1, 3], 4: [3], 5: [2]},
    # 1 the sequence task; 2 training, one head stalls; 3 reading trained maps;
    # 4 which heads matter, four ways
    "06": {4: [1, 2, 3]},
    # 1 grouped-query and multi-query attention; 2 shared values, the rank; 3 the KV cache;
    # 4 what the cache holds, a 7B model's savings
    "07": {1: [1, 3], 2: [1], 3: [2], 4: [3]},
    # 1 training on real data; 2 notebook 4's wiring; 3 scoring, the cache gives the same
    # tokens; 4 where the model goes wrong
    "08": {2: [1, 3], 3: [2], 4: [1]},
    # 1 reading heads by measurement; 2 against an EM alignment and positional rules;
    # 3 switching off, patching, with controls; 4 which heads matter, diffuse rows, six models
    "09": {3: [1, 2]},
    # 1 a shape check is not a test; 2 behaviour tests; 3 mask conventions; 4 the stage
    # comparison (exercise 1 the split the first bug gets wrong, 2 the whole class, checked
    # stage by stage, 3 a behaviour test of one's own)
    "10": {1: [1], 2: [3], 3: [3], 4: [2]},
}

BUILDS_ON = {"02": ("01",), "03": ("02",), "04": ("03",), "05": ("04",), "06": ("02",),
             "07": ("06",), "08": ("04", "07"), "09": ("05", "08"), "10": ("04",)}

_D2L_ATTENTION = "chapter_attention-mechanisms-and-transformers/"
# D2L's sections a notebook may name as prerequisites: {title: its page on d2l.ai}.
D2L = "https://d2l.ai/"
D2L_SECTIONS = {
    "Data Manipulation": "chapter_preliminaries/ndarray.html",
    "Linear Regression": "chapter_linear-regression/linear-regression.html",
    "Queries, Keys, and Values": _D2L_ATTENTION + "queries-keys-values.html",
    "Attention Scoring Functions": _D2L_ATTENTION + "attention-scoring-functions.html",
    "The Bahdanau Attention Mechanism": _D2L_ATTENTION + "bahdanau-attention.html",
    "Multi-Head Attention": _D2L_ATTENTION + "multihead-attention.html",
    "Self-Attention and Positional Encoding":
        _D2L_ATTENTION + "self-attention-and-positional-encoding.html",
    "The Transformer Architecture": _D2L_ATTENTION + "transformer.html",
    "Sequence-to-Sequence Learning for Machine Translation":
        "chapter_recurrent-modern/seq2seq.html",
    "Adam": "chapter_optimization/adam.html",
    "Information Theory":
        "chapter_appendix-mathematics-for-deep-learning/information-theory.html",
}

# {notebook: ((D2L section, what of it), ...), (mathematics, ...))}: what a notebook needs
# beyond the notebooks it builds on (BUILDS_ON).
PREREQUISITES = {
    "01": ((("Queries, Keys, and Values", "attention as a weighted average of values"),
            ("Attention Scoring Functions", "the scaled dot product and its softmax"),
            ("Linear Regression", "least squares")),
           ("linear algebra: least squares, orthonormal vectors",
            "probability: expectation, covariance, independence of Gaussian variables")),
    "02": ((("Adam", "the optimizer of the training loop"),),
           ("linear algebra: rank, the inverse of a matrix, orthogonal projections",)),
    "03": ((("Data Manipulation", "reshape and permute"),
            ("Attention Scoring Functions", "masked softmax, `valid_lens`"),
            ("Multi-Head Attention", "the section this notebook builds out")),
           ()),
    "04": ((("Self-Attention and Positional Encoding", "self-attention"),
            ("The Bahdanau Attention Mechanism", "a decoder's queries to the encoder's keys"),
            ("The Transformer Architecture", "the decoder's masked self-attention")),
           ()),
    "05": ((("Attention Scoring Functions", "why scores are divided by $\\sqrt{d}$"),
            ("Information Theory", "entropy")),
           ("dot products and cosines of random vectors in many dimensions",)),
    "06": ((("Multi-Head Attention", "the book's question of which heads matter"),),
           ("linear algebra: rank (notebook 2)", "calculus: gradient and Hessian")),
    "07": ((("The Transformer Architecture", "decoding token by token"),),
           ("linear algebra: rank (notebook 2)",)),
    "08": ((("Attention Scoring Functions", "masked softmax, `valid_lens`"),
            ("Multi-Head Attention", ""),
            ("Self-Attention and Positional Encoding", ""),
            ("The Transformer Architecture",
             "residual connections, layer normalization, the position-wise feed-forward "
             "network"),
            ("Sequence-to-Sequence Learning for Machine Translation",
             "teacher forcing, greedy decoding")),
           ()),
    "09": ((),
           ("probability: the EM algorithm, in outline (the notebook sketches it)",
            "statistics: rank correlation")),
}

MISCONCEPTIONS = (
    Misconception(
        "Splitting into heads is one reshape of (batch, length, $d$); the transpose is "
        "optional.",
        "Without the transpose a \"head\" gets features of several positions: the fold of "
        "0 to 23 shows where every number goes, the wrong reshape what goes wrong.",
        (("03", "Step 2: the reshape trick"),)),
    Misconception(
        "A mask for the batch works for the heads too: `valid_lens.repeat(h)`.",
        "The heads of one sequence sit next to each other in the folded batch, so each "
        "length is repeated $h$ times in place (`repeat_interleave`); `repeat` gives heads "
        "other sequences' lengths, silently.",
        (("03", "Step 2: the reshape trick"),)),
    Misconception(
        "Queries and keys must have the same length, and so does the output.",
        "The output has one row per query and the weights one column per key: 4 queries "
        "against 6 or 9 keys.",
        (("03", "Step 3: shape check"),
         ("04", "Cross-attention: sequence A asks, sequence B answers"))),
    Misconception(
        "Cross-attention needs a causal mask too.",
        "Its queries read another, complete sequence: it takes that sequence's padding "
        "(one length per sequence of keys), never a causal mask, which is self-attention's "
        "(one length per query).",
        (("04", "Cross-attention: sequence A asks, sequence B answers"),
         ("04", "Causal self-attention: no peeking ahead"))),
    Misconception(
        "`head_mask` is an attention mask.",
        "It multiplies each head's output before $\\mathbf{W}_o$ (0 switches a head off); "
        "it hides no key, and the attention weights do not depend on it.",
        (("06", "Switching heads off: `head_mask`"),)),
    Misconception(
        "More heads cost more compute.",
        "With $p = d/h$ the parameters ($4d^2$) and the matrix-product FLOPs do not depend on "
        "$h$; the attention maps and the elementwise work do grow. A model that fixes $p$ "
        "instead of $d$ pays per head.",
        (("03", "Heads are free: parameters"), ("03", "Heads are free: FLOPs"))),
    Misconception(
        "Heads must be sharp, one position each, to copy both values.",
        "Two soft heads work as well: what counts is that their mixtures differ (the mixing "
        "matrix is invertible), not that they are sharp.",
        (("02", "Two heads, two mixtures"),)),
    Misconception(
        "An attention map shows what the model relied on.",
        "A row must spend its weight somewhere, so a diffuse row can mean \"nothing "
        "relevant\"; only switching heads off or patching them tests what a map suggests.",
        (("05", "A diffuse row means \"nothing relevant\""),
         ("09", "Which heads matter"))),
)

QUIZ = (
    Question(
        "In cross-attention, 4 queries attend to 9 keys and values of width $d$. What is "
        "the shape of the output for one sequence, and of one head's attention weights?",
        "The output is 4 by $d$, one row per query; each head's weights are 4 by 9, one "
        "row per query and one column per key.",
        ("04",)),
    Question(
        "Why is `valid_lens` expanded with `repeat_interleave`, not with `repeat`, when the "
        "heads are folded into the batch?",
        "Row $ih + j$ of the folded batch is head $j$ of sequence $i$: the heads of a "
        "sequence sit next to each other, so each length must repeat $h$ times in a row. "
        "`repeat` tiles the whole list, pairs heads with other sequences' lengths and "
        "raises no error.",
        ("03",)),
    Question(
        "With $p = d/h$, do the parameters of multi-head attention depend on $h$? Its "
        "matrix-product FLOPs?",
        "Neither: $4d^2$ parameters without biases, and $8nd^2 + 4n^2d$ FLOPs for "
        "self-attention over $n$ tokens, for every $h$. What grows with $h$ is the number "
        "of attention weights and the elementwise work on them.",
        ("03",)),
    Question(
        "One head puts weights 0.9 and 0.1 on two positions instead of 0.5 and 0.5. Can a "
        "linear readout of its output now copy both values?",
        "No: whatever the split, the head hands on one mixture "
        "$\\alpha_1\\mathbf{v}_1 + \\alpha_2\\mathbf{v}_2$ and the best linear readout keeps "
        "exactly half of the squared error (for Gaussian values, the best of any readout).",
        ("01",)),
    Question(
        "Two heads look at the same two positions. What must be true of their weights for "
        "a readout to recover both values?",
        "Their weights must differ: the readout inverts the $2 \\times 2$ mixing matrix, "
        "whose determinant is $a - b$. Soft heads do; sharp ones are not needed.",
        ("02",)),
    Question(
        "Three positions are asked for and two heads with different weights look at them. "
        "What is the best relative squared error of a linear readout?",
        "$1 - \\operatorname{rank}(\\mathbf{A})/k = 1 - 2/3 = 1/3$: two heads hand on at "
        "most two independent mixtures of three values.",
        ("02",)),
    Question(
        "Heads are split by reshaping (batch, $n$, $d$) straight to "
        "(batch $\\cdot h$, $n$, $p$), without the transpose. What goes wrong, and does a "
        "shape check catch it?",
        "Each \"head\" then holds features of several positions, so positions mix. The "
        "shapes are the right ones, so a shape check passes: compare values.",
        ("03",)),
    Question(
        "Which mask does cross-attention take?",
        "The padding of the sequence it reads: one valid length per sequence of keys. "
        "Never a causal mask: that is for a decoder's self-attention, one length per query.",
        ("04",)),
    Question(
        "A row of an attention map is pale everywhere (diffuse). Does the query find "
        "everything relevant? Is the head useless?",
        "Neither follows. A softmax row must spend its weight somewhere, so a diffuse row "
        "can mean \"nothing relevant\" (notebook 5); and a head with diffuse rows can still "
        "carry what the model needs: only switching it off tells (notebook 9).",
        ("05", "09")),
    Question(
        "What does `head_mask` do? Is it an attention mask?",
        "It multiplies each head's output before the heads are concatenated and "
        "$\\mathbf{W}_o$ is applied (0 switches a head off). It hides no key: the attention "
        "weights do not depend on it.",
        ("06",)),
    Question(
        "With a KV cache, which tokens does a decoding step project?",
        "Only the new one: the keys and values of the earlier tokens come from the cache, "
        "where a decoder without one projects the whole prefix again at every step.",
        ("07",)),
)

COURSE = Course(LECTURES, LABS, LIVE_CELLS, OBJECTIVE_EXERCISES, BUILDS_ON, PREREQUISITES,
                MISCONCEPTIONS, QUIZ)


def course_for(root):
    """``COURSE`` for this repository's chapter (book.ROOT), None for another one."""
    return COURSE if pathlib.Path(root).resolve() == book.ROOT.resolve() else None


# --- the facts ------------------------------------------------------------------------------

@dataclasses.dataclass
class LiveCell:
    tag: str  # book.LIVE_PREFIX + its purpose
    section: str  # the heading of its section (a ### one after the ## one it belongs to)
    purpose: str = ""  # from the course's live table
    say: str = ""


@dataclasses.dataclass
class ExerciseFact:
    number: int
    statement: str  # its item under "## Exercises", the first sentences (lead)
    checked: int  # answers checked (its parts); 0 for an open-ended exercise
    points: float  # max_points
    written_part: bool  # an open part beside the checked ones (not graded by make grade)
    rubric: list = dataclasses.field(default_factory=list)  # (points, criterion): by hand
    # points of the checked answers that are each student's own (variants) and those that
    # are the same for everyone (open-book); together the checked points
    own_points: float = 0
    open_book_points: float = 0


@dataclasses.dataclass
class NotebookFact:
    rel: str
    title: str
    words: int
    run_s: float
    live: list
    exercises: list
    solutions: str | None  # the rel of its worked solutions, if any
    headings: list = dataclasses.field(default_factory=list)  # its ## and ### headings
    objectives: list = dataclasses.field(default_factory=list)  # "What you will learn"

    @property
    def number(self):
        return book.number(self.rel)

    @property
    def read_min(self):
        return math.ceil(self.words / WORDS_PER_MINUTE)

    @property
    def points(self):
        return sum(e.points for e in self.exercises)


class ChapterFacts(list):
    """The notebooks' :class:`NotebookFact` in reading order, and ``plan``: the course,
    checked against them (a :class:`CoursePlan`), or None without a course."""

    plan = None


def load_budgets(root=book.ROOT):
    """``NOTEBOOK_BUDGET_S`` of ``root/benchmarks/report.py``: {"01": seconds, ...}."""
    path = pathlib.Path(root) / BUDGETS_FILE
    if not path.is_file():
        raise PlanError(f"{BUDGETS_FILE} is missing: the teaching plan takes each notebook's "
                        f"seconds to run from its {BUDGETS_NAME}")
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(
            node, "targets", [])
        if any(isinstance(t, ast.Name) and t.id == BUDGETS_NAME for t in targets):
            try:
                budgets = ast.literal_eval(node.value)
            except ValueError:
                budgets = None
            if not (isinstance(budgets, dict) and all(
                    isinstance(k, str) and isinstance(v, (int, float)) and v > 0
                    for k, v in budgets.items())):
                raise PlanError(f"{BUDGETS_FILE}: {BUDGETS_NAME} must be a literal dict of "
                                "notebook numbers to seconds, e.g. {\"01\": 9}")
            return budgets
    raise PlanError(f"{BUDGETS_FILE} defines no {BUDGETS_NAME} (the notebooks' time budgets)")


def budget_of(rel, budgets):
    nn = book.number(rel)
    if nn not in budgets:
        raise PlanError(
            f"{rel} has no time budget: add \"{nn}\": SECONDS to {BUDGETS_NAME} in "
            f"{BUDGETS_FILE} (CONTRIBUTING.md, \"Adding notebook NN\", step 5); the teaching "
            "plan gives it as the notebook's seconds to run")
    return budgets[nn]


def prose_cells(nb):
    """The Markdown a reader reads: every Markdown cell but the navigation cell, up to the
    ``## References`` heading."""
    texts = []
    for cell in nb.cells:
        if cell.cell_type != "markdown" or book.NAV_TAG in book.tags(cell):
            continue
        lines = [x for x in cell.source.split("\n") if not book.BADGE_RE.match(x.strip())]
        text = "\n".join(lines)
        references = re.search(r"(?m)^## References\b", text)
        if references:
            texts.append(text[: references.start()])
            break
        texts.append(text)
    return texts


def count_words(markdown):
    """Words of Markdown prose: a formula is one word; link targets and HTML tags none."""
    text = _FORMULA.sub(" formula ", markdown)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"https?://\S+", " ", text)
    return len(_WORD.findall(text))


def _headings(source):
    """[(level, text)] of the ``##`` and ``###`` headings of Markdown ``source`` (none inside
    a fenced code block)."""
    found, fenced = [], False
    for line in source.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        m = None if fenced else _HEADING.match(line)
        if m:
            found.append((len(m.group(1)), m.group(2)))
    return found


def sections(nb):
    """[(section, cell)] for every cell but the navigation cell: ``section`` is the heading
    the cell sits under (after its own headings, for a Markdown cell), "## › ###" for a
    ``###`` part, "" before the first heading."""
    out, top, sub = [], "", ""
    for cell in nb.cells:
        if book.NAV_TAG in book.tags(cell):
            continue
        if cell.cell_type == "markdown":
            for level, text in _headings(cell.source):
                top, sub = (text, "") if level == 2 else (top, text)
        out.append((f"{top} › {sub}" if top and sub else sub or top, cell))
    return out


def headings(nb):
    """The texts of the notebook's ``##`` and ``###`` headings, in order."""
    return [text for cell in nb.cells if cell.cell_type == "markdown"
            and book.NAV_TAG not in book.tags(cell) for _, text in _headings(cell.source)]


def objectives(nb):
    """The bullets of the notebook's ``## What you will learn`` section, each on one line
    (a bullet's continuation lines joined to it)."""
    bullets, inside = [], False
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.split("\n"):
            if line.startswith("## "):
                if inside:
                    return bullets
                inside = line.strip() == OBJECTIVES_HEADING
                continue
            if not inside or line.startswith("#"):
                continue
            m = _BULLET.match(line)
            if m:
                bullets.append(m.group(1).strip())
            elif line.strip() and bullets:
                bullets[-1] += " " + line.strip()
    return bullets


def live_cells(nb, rel="notebook"):
    """The cells tagged ``live-...`` (book.LIVE_PREFIX), as :class:`LiveCell` in order; a
    tag on a cell that is not code, or on several cells, is a PlanError."""
    found = []
    for section, cell in sections(nb):
        for tag in book.tags(cell):
            if not tag.startswith(book.LIVE_PREFIX):
                continue
            if cell.cell_type != "code":
                raise PlanError(f"{rel}: the tag {tag!r} is on a {cell.cell_type} cell; a "
                                "live cell is a code cell to run in class")
            if any(c.tag == tag for c in found):
                raise PlanError(f"{rel}: the tag {tag!r} is on several cells; it names one "
                                "cell to run in class")
            found.append(LiveCell(tag, section))
    return found


def lead(text, at_least=STATEMENT_CHARS):
    """The first sentences of ``text``, as few as make ``at_least`` characters (a sentence
    end inside `code` or $maths$ does not count)."""
    text = " ".join(text.split())
    plain = _SPAN.sub(lambda m: "x" * len(m.group(0)), text)  # same length, no ends inside
    for end in _SENTENCE_END.finditer(plain):
        if end.end() >= at_least:
            return text[: end.end()]
    return text


def exercise_statements(nb):
    """{number: lead} of the numbered items under ``## Exercises``."""
    statements, inside = {}, False
    for cell in nb.cells:
        if cell.cell_type != "markdown" or book.NAV_TAG in book.tags(cell):
            continue
        source = cell.source
        if not inside:
            head, mark, source = source.partition("## Exercises")
            if not mark:
                continue
            inside = True
        source, stop, _ = source.partition("## References")
        for m in _ITEM.finditer(source):
            statements.setdefault(int(m.group(1)), lead(m.group(2)))
        if stop:
            break
    return statements


def exercise_module(nb, rel):
    """The module the notebook's exercise-import cell names, or None without one."""
    numbers = {a or b for cell in nb.cells if cell.cell_type == "code"
               for a, b in grade.IMPORT_RE.findall(cell.source)}
    if len(numbers) > 1:
        raise PlanError(f"{rel} imports the exercises of several notebooks: {sorted(numbers)}")
    return f"d2lutil.exercises.nb{numbers.pop()}" if numbers else None


def load_exercises(module):
    """The ``Exercise`` objects of ``module`` (its ``__all__``), by number."""
    loaded = importlib.import_module(module)
    return sorted((getattr(loaded, name) for name in loaded.__all__), key=lambda e: e.number)


def _own_and_open(exercise):
    """(points that vary per student, points that are open-book) of an exercise's checked
    answers: a part varies when the exercise has variants and the part is not open-book."""
    if exercise is None or not getattr(exercise, "parts", None):
        return 0, 0
    varies = getattr(exercise, "variants", None)
    open_book = getattr(exercise, "open_book", {}) or {}
    own = sum(p for j, p in enumerate(exercise.points) if varies and j not in open_book)
    return own, exercise.max_points - own


def exercise_facts(nb, rel, exercises_of=load_exercises):
    statements = exercise_statements(nb)
    module = exercise_module(nb, rel)
    exercises = {e.number: e for e in (exercises_of(module) if module else [])}
    facts = []
    for n in sorted(set(statements) | set(exercises)):
        e = exercises.get(n)
        facts.append(ExerciseFact(
            n, statements.get(n, f"ex{n} of {module}"), len(e.parts) if e else 0,
            e.max_points if e else 0, bool(e and e.parts and e.open_part),
            list(getattr(e, "rubric", [])) if e else [], *_own_and_open(e)))
    return facts


def notebook_fact(path, root, budgets, exercises_of=load_exercises):
    rel = book.relpath_of(path, root)
    nb = book.read(path)
    solutions = pathlib.Path(root) / book.SOLUTIONS_DIR / f"{book.number(rel)}_solutions.ipynb"
    return NotebookFact(
        rel, book.title_of(nb, rel), sum(count_words(t) for t in prose_cells(nb)),
        budget_of(rel, budgets), live_cells(nb, rel), exercise_facts(nb, rel, exercises_of),
        book.relpath_of(solutions, root) if solutions.is_file() else None,
        headings(nb), objectives(nb))


_AUTO = object()


def chapter_facts(root=book.ROOT, budgets=None, exercises_of=load_exercises, course=_AUTO):
    """A :class:`NotebookFact` for every chapter notebook under ``root``, in order, as a
    :class:`ChapterFacts` whose ``plan`` is ``course`` (default: ``course_for(root)``)
    checked against the notebooks (``plan_course``)."""
    budgets = load_budgets(root) if budgets is None else budgets
    facts = ChapterFacts(notebook_fact(p, root, budgets, exercises_of)
                         for p in book.chapter_notebooks(root))
    course = course_for(root) if course is _AUTO else course
    if course is not None:
        facts.plan = plan_course(course, facts, root)
    return facts


# --- the course, checked against the notebooks ----------------------------------------------

@dataclasses.dataclass
class PlannedPart:
    minutes: int
    topic: str
    notebooks: list  # their NotebookFact
    screens: tuple | None  # (first, last) of the deck, None for a part with no notebook
    live: list  # the LiveCell of its notebooks


@dataclasses.dataclass
class PlannedLecture:
    title: str
    deck: str
    minutes: int
    parts: list
    screens: int  # the deck's screens, its title slide included

    @property
    def notebooks(self):
        return [f for part in self.parts for f in part.notebooks]

    @property
    def heading(self):
        return f"{self.title}: {self.minutes} minutes"


@dataclasses.dataclass
class CoursePlan:
    lectures: list
    labs: list  # [(NotebookFact, what it does, [the facts it builds on])]
    live: list  # [(NotebookFact, LiveCell)] in reading order
    objectives: dict  # {rel: [(objective, [exercise numbers])]}
    builds_on: dict  # {rel: [NotebookFact]}
    prerequisites: list  # [(NotebookFact, [(section, url, what)], [maths])]
    misconceptions: list  # [(belief, answer, [(NotebookFact, [its headings])])]
    quiz: list  # [(question, answer, [NotebookFact])]
    roles: dict  # {rel: "part 3 of the first lecture", ...}
    edges: list  # [(from number, to number)] between notebooks that exist


def _problems(problems):
    if problems:
        raise PlanError("\n".join(dict.fromkeys(problems)))  # each once, in order


def _lectures(course, by_number, root):
    lectures, problems = [], []
    for lec in course.lectures:
        if lec.deck not in book.LECTURE_DECKS:
            problems.append(f"LECTURES in tools/plan.py: {lec.title} names the deck "
                            f"{lec.deck!r}, which is not in book.LECTURE_DECKS")
            continue
        tag, numbers = book.LECTURE_DECKS[lec.deck]
        total = sum(p.minutes for p in lec.parts)
        if total != lec.minutes:
            problems.append(f"LECTURES in tools/plan.py: the parts of {lec.title} add up to "
                            f"{total} minutes, not {lec.minutes}")
        ranges = lecture.screen_ranges(root, lec.deck)
        if not ranges:
            problems.append(
                f"the lecture deck {lec.deck!r} has no cell tagged {tag!r} (in notebooks "
                f"{', '.join(numbers)}): tag the cells of {lec.title.lower()} before "
                "building the teaching plan")
            continue
        parts = []
        for part in lec.parts:
            facts, screens = [], []
            for nn in part.notebooks:
                if nn not in numbers:
                    problems.append(f"LECTURES in tools/plan.py: notebook {nn} is not in the "
                                    f"deck {lec.deck!r} (notebooks {', '.join(numbers)})")
                elif nn not in by_number:
                    problems.append(f"LECTURES in tools/plan.py: {lec.title} names notebook "
                                    f"{nn}, which is not in the chapter")
                elif by_number[nn].rel not in ranges:
                    problems.append(f"{by_number[nn].rel}: no cell is tagged {tag!r}, so it "
                                    f"has no screen in the deck {lec.deck!r}")
                else:
                    facts.append(by_number[nn])
                    screens.append(ranges[by_number[nn].rel])
            parts.append(PlannedPart(
                part.minutes, part.topic, facts,
                (screens[0][0], screens[-1][1]) if screens else None,
                [c for f in facts for c in f.live]))
        lectures.append(PlannedLecture(lec.title, lec.deck, lec.minutes, parts,
                                       max(last for _, last in ranges.values())))
    return lectures, problems


def _live(course, facts):
    problems, where = [], {}
    for fact in facts:
        for cell in fact.live:
            where[cell.tag] = fact
            if cell.tag not in course.live:
                problems.append(
                    f"{fact.rel}: the cell tagged {cell.tag!r} (in \"{cell.section}\") is not "
                    "in LIVE_CELLS of tools/plan.py: add its purpose and what to say, or fix "
                    "the tag")
            else:
                cell.purpose, cell.say = course.live[cell.tag]
    for tag in course.live:
        if tag not in where:
            problems.append(f"LIVE_CELLS in tools/plan.py: no cell of the chapter is tagged "
                            f"{tag!r}: tag the code cell to run live, or drop it from the table")
    return [(f, c) for f in facts for c in f.live], problems


def _objectives(course, by_number):
    mapped, problems = {}, []
    for nn, table in course.objectives.items():
        if nn not in by_number:
            problems.append(f"OBJECTIVE_EXERCISES in tools/plan.py: notebook {nn} is not in "
                            "the chapter")
            continue
        fact = by_number[nn]
        numbers = {e.number for e in fact.exercises}
        for index, exercises in table.items():
            if not 1 <= index <= len(fact.objectives):
                problems.append(
                    f"OBJECTIVE_EXERCISES in tools/plan.py: {fact.rel} has no objective "
                    f"{index} (its \"What you will learn\" has {len(fact.objectives)} "
                    "bullets): re-map it to the current bullets")
            for n in exercises:
                if n not in numbers:
                    problems.append(
                        f"OBJECTIVE_EXERCISES in tools/plan.py: {fact.rel} has no exercise "
                        f"{n} (its exercises: {sorted(numbers)})")
    for fact in by_number.values():
        table = course.objectives.get(fact.number, {})
        mapped[fact.rel] = [(text, sorted(table.get(i, [])))
                            for i, text in enumerate(fact.objectives, 1)]
    return mapped, problems


def _heading_of(fact, heading, table):
    """``heading`` as it stands in ``fact``'s notebook (whitespace aside), or a problem."""
    wanted = " ".join(heading.split())
    for text in fact.headings:
        if " ".join(text.split()) == wanted:
            return text, None
    listed = "; ".join(f'"{h}"' for h in fact.headings)
    return None, (f"{table} in tools/plan.py: {fact.rel} has no section \"{heading}\" (a "
                  f"renamed heading?); its headings: {listed}")


def _misconceptions(course, by_number):
    rows, problems = [], []
    for m in course.misconceptions:
        where = []
        for nn, heading in m.where:
            if nn not in by_number:
                problems.append(f"MISCONCEPTIONS in tools/plan.py: notebook {nn} is not in "
                                f"the chapter (for \"{m.belief}\")")
                continue
            found, problem = _heading_of(by_number[nn], heading, "MISCONCEPTIONS")
            if problem:
                problems.append(problem)
            elif where and where[-1][0] is by_number[nn]:
                where[-1][1].append(found)
            else:
                where.append((by_number[nn], [found]))
        rows.append((m.belief, m.answer, where))
    return rows, problems


def plan_course(course, facts, root):
    """The :class:`CoursePlan` of ``course`` for the chapter ``facts`` under ``root``, every
    table checked against the notebooks; a PlanError lists every problem found."""
    by_number = {f.number: f for f in facts}
    lectures, problems = _lectures(course, by_number, root)
    live, more = _live(course, facts)
    problems += more
    objectives, more = _objectives(course, by_number)
    problems += more
    misconceptions, more = _misconceptions(course, by_number)
    problems += more
    edges = [(a, b) for b, sources in course.builds_on.items() for a in sources
             if a in by_number and b in by_number]
    builds_on = {f.rel: [by_number[a] for a, b in edges if b == f.number] for f in facts}
    prerequisites = []
    for fact in facts:
        d2l, maths = course.prerequisites.get(fact.number, ((), ()))
        sections_ = []
        for title, what in d2l:
            if title not in D2L_SECTIONS:
                problems.append(f"PREREQUISITES in tools/plan.py: notebook {fact.number} "
                                f"names the D2L section \"{title}\", which is not in "
                                "D2L_SECTIONS")
            else:
                sections_.append((title, D2L + D2L_SECTIONS[title], what))
        prerequisites.append((fact, sections_, list(maths)))
    quiz = []
    for q in course.quiz:
        missing = [nn for nn in q.notebooks if nn not in by_number]
        if missing:
            problems.append(f"QUIZ in tools/plan.py: notebook {missing[0]} is not in the "
                            f"chapter (for \"{q.question}\")")
        quiz.append((q.question, q.answer, [by_number[nn] for nn in q.notebooks
                                            if nn in by_number]))
    _problems(problems)
    roles = {}
    for lec in lectures:
        for i, part in enumerate(lec.parts, 1):
            for f in part.notebooks:
                first, last = part.screens
                roles[f.rel] = (f"part {i} of {lec.title.lower()} ({part.minutes} min, "
                                f"screens {first}–{last})")
    labs = []
    for nn, what in course.labs.items():
        if nn in by_number:
            sources = builds_on[by_number[nn].rel]
            labs.append((by_number[nn], what, sources))
            roles[by_number[nn].rel] = "a lab, after " + (_numbers(
                [f.number for f in sources], "notebook", "notebooks") if sources else
                "the lectures")
    return CoursePlan(lectures, labs, live, objectives, builds_on, prerequisites,
                      misconceptions, quiz, roles, edges)


def course_headings(plan):
    """The page's ``##`` headings on the course ``plan`` (a :class:`CoursePlan`), in order:
    they come before "Grading the homework" and the notebooks' sections."""
    return [lec.heading for lec in plan.lectures] + [
        text for key, text in HEADINGS.items() if key != "labs" or plan.labs]


# --- the figure: which notebook builds on which ---------------------------------------------

def _groups(plan, facts):
    """{number: (group index, group name)}: each lecture, then the labs, then the rest."""
    groups = {}
    for i, lec in enumerate(plan.lectures):
        for f in lec.notebooks:
            groups[f.number] = (i, lec.title.removeprefix("The ").capitalize())
    for f, _, _ in plan.labs:
        groups.setdefault(f.number, (len(plan.lectures), "Lab"))
    for f in facts:
        groups.setdefault(f.number, (len(plan.lectures) + 1, "Other"))
    return groups


def map_layout(numbers, edges, groups):
    """{number: (x, y)}: -y the length of the longest chain of notebooks leading to it (the
    first notebook on top), x its group's column (the first lecture on the left); a notebook
    that would take a place already taken moves one column to the right."""
    depth = {}

    def depth_of(n, seen=()):
        if n not in depth:
            if n in seen:
                raise PlanError(f"BUILDS_ON in tools/plan.py: notebook {n} builds on itself "
                                "(a cycle)")
            depth[n] = max((depth_of(a, (*seen, n)) + 1 for a, b in edges if b == n),
                           default=0)
        return depth[n]

    places, taken = {}, set()
    for n in numbers:
        x, y = groups[n][0], -depth_of(n)
        while (x, y) in taken:
            x += 1
        taken.add((x, y))
        places[n] = (x, y)
    return places


def map_alt(plan, facts):
    """The figure's alt text: every notebook, its place in the course and what it builds
    on, in words."""
    groups = _groups(plan, facts)
    parts = []
    for f in facts:
        sources = [a.number for a in plan.builds_on[f.rel]]
        on = f" builds on {' and '.join(sources)}" if sources else " starts the chapter"
        parts.append(f"{f.number} {f.title} ({groups[f.number][1].lower()}){on}.")
    return "Which notebook builds on which, arrows from a notebook to the next: " + " ".join(
        parts)


def draw_map(plan, facts, path):
    """Draw the figure of which notebook builds on which into the PNG ``path``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch, Patch

    groups = _groups(plan, facts)
    places = map_layout([f.number for f in facts], plan.edges, groups)
    colours = ["#c6dbef", "#fdd0a2", "#c7e9c0", "#e0e0e0"]  # light, text stays legible
    xs, ys = [x for x, _ in places.values()], [y for _, y in places.values()]
    # About 2.2 by 0.9 inches a place, and half an inch for the legend: at 110 dpi the
    # figure keeps its size in the page's column, its text legible.
    columns, rows = max(xs) - min(xs) + 1, max(ys) - min(ys) + 1
    fig = Figure(figsize=(2.2 * columns, 0.9 * rows + 0.5), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(min(xs) - 0.5, max(xs) + 0.5)
    ax.set_ylim(min(ys) - 0.5, max(ys) + 0.5 + 0.5 / 0.9)
    ax.axis("off")
    boxes = {}
    for f in facts:
        x, y = places[f.number]
        label = "\n".join(textwrap.wrap(f"{f.number} {f.title.split(':')[0]}", 24,
                                        max_lines=2, placeholder=" …"))
        colour = colours[min(groups[f.number][0], len(colours) - 1)]
        boxes[f.number] = ax.text(
            x, y, label, ha="center", va="center", fontsize=9, zorder=3,
            bbox={"boxstyle": "round,pad=0.4", "facecolor": colour, "edgecolor": "#333333"})
    fig.canvas.draw()  # places the boxes, so that the arrows stop at their edges
    for a, b in plan.edges:
        ax.add_patch(FancyArrowPatch(
            places[a], places[b], patchA=boxes[a].get_bbox_patch(),
            patchB=boxes[b].get_bbox_patch(), arrowstyle="-|>", mutation_scale=12,
            color="#333333", linewidth=1.1, zorder=2))
    names = sorted({g for g in groups.values()})
    ax.legend(handles=[Patch(facecolor=colours[min(i, len(colours) - 1)], edgecolor="#333333",
                             label=name) for i, name in names],
              loc="upper center", ncol=len(names), frameon=False, fontsize=9,
              bbox_to_anchor=(0.5, 1.0))
    fig.savefig(path, format="png", metadata={"Software": None})
    return path


# --- the page -------------------------------------------------------------------------------

def _number(value):
    return f"{value:g}"


def _count(value, noun):
    """``1 point``, ``2.5 points``."""
    return f"{value:g} {noun}" + ("" if value == 1 else "s")


def _code(text):
    """``text`` as inline code, fenced by more backticks than it holds."""
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _numbers(values, one, many):
    """``exercise 2``, ``exercises 1 and 3``, ``exercises 1, 2 and 3``."""
    values = [str(int(v)) if isinstance(v, str) else str(v) for v in values]
    if len(values) == 1:
        return f"{one} {values[0]}"
    return f"{many} {', '.join(values[:-1])} and {values[-1]}"


def render(facts, pub):
    """The page's Markdown for the notebooks' ``facts`` (``pub``: where the README lives);
    with the course of ``facts.plan``, if any."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE.parent), undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)
    env.filters["number"] = _number
    env.filters["code"] = _code
    env.filters["count"] = _count
    env.filters["numbers"] = _numbers
    env.filters["cell"] = lambda text: text.replace("|", "\\|")  # inside a table row
    env.filters["quoted"] = lambda text: f"“{text}”"
    env.filters["alt"] = lambda text: re.sub(r"([\[\]])", r"\\\1", text)
    plan = getattr(facts, "plan", None)
    return env.get_template(TEMPLATE.name).render(
        notebooks=facts, plan=plan, headings=HEADINGS, words_per_minute=WORDS_PER_MINUTE,
        budgets_file=BUDGETS_FILE, budgets_name=BUDGETS_NAME,
        readme=f"{pub.repository}/blob/{pub.branch}/{README_SECTION}",
        total_points=sum(f.points for f in facts),
        total_read=sum(f.read_min for f in facts), total_run=sum(f.run_s for f in facts),
        total_live=sum(len(f.live) for f in facts),
        total_exercises=sum(len(f.exercises) for f in facts),
        map_figure=MAP_FIGURE, map_alt=map_alt(plan, facts) if plan else "")


def write_page(src, facts, pub):
    """Write the page into the site's sources ``src`` (and, with a course, its figure
    beside it); return the page's path."""
    path = pathlib.Path(src) / f"{PAGE}.md"
    path.write_text(render(facts, pub), encoding="utf-8")
    plan = getattr(facts, "plan", None)
    if plan is not None:
        draw_map(plan, facts, pathlib.Path(src) / MAP_FIGURE)
    return path
