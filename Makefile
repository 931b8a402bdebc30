# The chapter's commands. Each one sets up .venv first (created and filled when
# missing, refreshed when requirements.txt or pyproject.toml changes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# pip installs uv (pinned in requirements.txt), and uv the rest (tools/install.py: from
# the indexes, wheel folders and constraints pip is configured with; uv's cache is reused).
PIP_FLAGS ?= --no-cache-dir --disable-pip-version-check --quiet
# The browser assets of the site, slides and browser test (package.json), from npm.
NODE_STAMP := node_modules/.package-lock.json
# `make execute NB=notebooks/01_x.ipynb` runs one notebook; without NB, every notebook
# (tools/book.py finds them: nothing here lists them).
NB ?=
# Notebooks run two at a time (make test: pytest-xdist, each notebook on one worker;
# make execute and make robust: two kernels at a time), each kernel on one thread, so the
# two share a 2-core machine without contention. The same thread setting in make test,
# make execute and make robust; the stored outputs do not depend on it (CONTRIBUTING.md).
JOBS ?= 2
THREADS ?= 1
# pytest, with tests/quick_nbformat.py loaded first (1 s less at each process's start).
PYTEST := $(BIN)/python -m pytest -p tests.quick_nbformat

# The venv's own kernel, whatever kernels the user has installed elsewhere;
# and Jupyter's platform-dirs migration notice kept quiet.
export JUPYTER_PATH := $(CURDIR)/$(VENV)/share/jupyter
export JUPYTER_PLATFORM_DIRS := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: help setup chapter test test-roundoff test-grade grade student-edition autograder execute robust lab present lecture lint bench weights clean

help:
	@echo "make setup     .venv (Python packages) and node_modules (the site's scripts), nothing else"
	@echo "make chapter [SOLUTIONS=0]   execute every notebook and build the site and slides into"
	@echo "               build/site/; SOLUTIONS=0: the students' site, no worked solutions"
	@echo "make test      unit tests + every notebook re-executed by nbval (strict)"
	@echo "make test-roundoff   the notebooks under nbval with ATen's kernels for a CPU without vector instructions"
	@echo "make execute   re-run notebooks in place to refresh their stored outputs"
	@echo "make robust    every notebook with every seed shifted by K = 1..5: asserts must hold"
	@echo "make lab       JupyterLab on notebooks/"
	@echo "make present NB=notebooks/01_x.ipynb   that notebook as a live RISE slideshow"
	@echo "make lecture   each lecture as one notebook to present live (build/lecture/), then"
	@echo "               make present NB=build/lecture/lecture.ipynb: run all cells, then Alt+R"
	@echo "make lint      ruff over d2lutil/, tests/, tools/, course/, site/, benchmarks/ and the notebooks"
	@echo "make bench     benchmarks (writes build/bench/)"
	@echo "make weights   train notebook 8's translator for seeds 0-5 into d2lutil/weights/"
	@echo "make grade SUBMISSIONS=DIR [ROSTER=CSV] [MARKS=CSV] [WEIGHTS=NN=W,...] [BOOK=1] [OUT=FILE] [JOBS=2]   grade a class's notebooks"
	@echo "make student-edition WHEEL_URL=URL [ROSTER=CSV]   the notebooks and sealed wheel to hand out (build/student/)"
	@echo "make autograder   the Gradescope autograder zip (build/autograder.zip)"
	@echo "make test-grade   the grader on hostile submissions and a synthetic class"

# JupyterLab's settings overrides for the venv, kept in jupyter/lab/settings/overrides.json
# (no prompt to fetch the "official Jupyter news" in `make lab` and `make present`).
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings

$(STAMP): requirements.txt requirements-d2l.txt pyproject.toml jupyter/lab/settings/overrides.json
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install $(PIP_FLAGS) "$$(grep -m1 '^uv==' requirements.txt)"
	$(BIN)/python tools/install.py -r requirements.txt
	$(BIN)/python tools/install.py --no-deps -r requirements-d2l.txt
	mkdir -p $(LAB_SETTINGS)
	cp jupyter/lab/settings/overrides.json $(LAB_SETTINGS)/overrides.json
	touch $@

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# `make setup`: .venv and node_modules, which every other target sets up first
# (`make -j2 setup` fills both at once).
setup: $(STAMP) $(NODE_STAMP)

# `make chapter SOLUTIONS=0`: the students' site, without the solutions notebooks' pages
# or any link or sentence pointing at them (tools/chapter.py build --solutions 0).
SOLUTIONS ?= 1
chapter: $(STAMP) $(NODE_STAMP)
	$(BIN)/python tools/chapter.py build --out build/site --solutions "$(SOLUTIONS)"

test execute robust test-roundoff: export OMP_NUM_THREADS := $(THREADS)

# The course's (course/tests) quick tests run here; the grader's slow ones in make test-grade
# (GRADE_TESTS: minutes of sandboxed kernels).
GRADE_TESTS := course/tests/test_grade.py course/tests/test_autograder.py \
	course/tests/test_student_edition.py
test: $(STAMP) $(NODE_STAMP)
	$(PYTEST) -n $(JOBS) $(addprefix --ignore=,$(GRADE_TESTS))

# The notebooks again under nbval, computed with ATen's kernels for a CPU without vector
# instructions (read when torch is imported): an output that only ATen's vector kernels
# reproduce fails here, before it lands. MKL and oneDNN still choose this CPU's own kernels
# (CONTRIBUTING.md, "Every machine").
test-roundoff: $(STAMP)
	ATEN_CPU_CAPABILITY=default $(PYTEST) -n $(JOBS) notebooks

# `make grade SUBMISSIONS=DIR`: every .ipynb in DIR (ID__name.ipynb, or a Canvas or Moodle
# export as it comes) graded against the chapter notebook it answers, on its student's
# variants (ROSTER: a CSV of the ids, or the LMS's gradebook; MARKS: hand marks of the
# written parts; WEIGHTS: notebooks' weights in the totals, 10=2,09=0.5; BOOK=1: the book's
# values, no ids), into OUT (build/grades/grades.csv),
# roster.csv and written/ beside it, never over what it reads (course/README.md).
SUBMISSIONS ?=
OUT ?= build/grades/grades.csv
ROSTER ?=
MARKS ?=
WEIGHTS ?=
BOOK ?=
grade: $(STAMP)
	@test -d "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=DIR [ROSTER=CSV] [MARKS=CSV] [WEIGHTS=10=2,09=0.5] [BOOK=1] [OUT=FILE] [JOBS=2]: SUBMISSIONS must be a folder of .ipynb files" >&2; exit 2; }
	$(BIN)/python course/grade.py "$(SUBMISSIONS)" --out "$(OUT)" --jobs $(JOBS) $(if $(ROSTER),--roster "$(ROSTER)") $(if $(MARKS),--marks "$(MARKS)") $(if $(WEIGHTS),--weights "$(WEIGHTS)") $(if $(BOOK),--book)

# `make student-edition WHEEL_URL=https://.../d2lutil-0.1.0+student-py3-none-any.whl`: the
# notebooks and the sealed wheel an instructor hands out, into build/student/
# (course/student_edition.py; course/README.md). Put the wheel at WHEEL_URL, under the file
# name it is built with: pip refuses a renamed wheel, so WHEEL_URL must end in that name
# (checked before building). With ROSTER (the class roster, as make grade reads it) the id
# cell catches a mistyped id.
WHEEL_URL ?=
student-edition: $(STAMP)
	@test -n "$(WHEEL_URL)" || { echo "usage: make student-edition WHEEL_URL=URL: where students will download the wheel (https://... or file:/...), ending in its file name, d2lutil-VERSION+student-py3-none-any.whl" >&2; exit 2; }
	$(BIN)/python course/student_edition.py --wheel-url "$(WHEEL_URL)" $(if $(ROSTER),--roster "$(ROSTER)")

# `make autograder`: the Gradescope autograder zip (setup.sh, run_autograder and what grading
# needs), into AUTOGRADER (course/autograder.py; course/README.md, "Gradescope").
AUTOGRADER ?= build/autograder.zip
autograder: $(STAMP)
	$(BIN)/python course/autograder.py --out "$(AUTOGRADER)"

# The grader's tests: the whole matrix of careless and hostile submissions on one notebook,
# a synthetic class (right, wrong and empty for every notebook), students graded on their
# own variants, the Gradescope autograder run as Gradescope runs it, and the student edition
# searched for answers.
test-grade: $(STAMP)
	GRADE_FULL_CLASS=1 $(PYTEST) $(GRADE_TESTS)

execute: $(STAMP)
	$(BIN)/python tools/chapter.py execute --jobs $(JOBS) $(NB)

# `make robust` runs every notebook (or NB) once per K with every seed shifted by K
# (tests/notebooks/robust.py): no output compared, every assert must hold.
# `make robust K="1 2"`.
K ?= 1 2 3 4 5
robust: $(STAMP)
	$(BIN)/python tests/notebooks/robust.py $(NB) --k $(K) --jobs $(JOBS)

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks

# JupyterLab (on this machine only, as `make lab`) opening the browser straight on the RISE
# slideshow of NB: its cells run live (Shift+Enter). In `make lab` the notebook toolbar's
# "Render the current notebook as Reveal Slideshow" button (Alt+R) does the same.
# A notebook outside notebooks/ (a lecture of `make lecture`) opens as a notebook instead:
# its slides need code that the slideshow skips, so run every cell first (the toolbar's
# "Restart the kernel and run all cells"), then Alt+R shows the slides on that kernel.
present: $(STAMP)
	@test -f "$(NB)" || { echo "usage: make present NB=notebooks/01_one_head_one_mixture.ipynb, or a lecture: make lecture, then make present NB=build/lecture/lecture.ipynb" >&2; exit 2; }
	$(BIN)/jupyter lab --LabApp.default_url=$(if $(filter notebooks/%,$(NB)),/rise,/lab/tree)/$(NB)

# `make lecture`: each lecture deck (tools/lecture.py) as one notebook to present live, into
# build/lecture/ (or LECTURE_OUT): the deck's slides with the cells tagged live-... shown,
# the code they need in the notebook but skipped by the slideshow. Written without outputs
# and not run: `make present NB=build/lecture/lecture.ipynb` runs it in class.
LECTURE_OUT ?=
lecture: $(STAMP)
	$(BIN)/python tools/lecture.py $(if $(LECTURE_OUT),--out "$(LECTURE_OUT)")

lint: $(STAMP)
	$(BIN)/ruff check d2lutil tests tools course site benchmarks notebooks

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py --out build/bench

# The weights notebook 9 loads (tools/make_weights.py: notebook 8's data and training loop at
# seeds 0-5, a few minutes); then `make execute NB=notebooks/09_reading_the_heads.ipynb`.
weights: $(STAMP)
	OMP_NUM_THREADS=1 $(BIN)/python tools/make_weights.py

clean:
	rm -rf build
