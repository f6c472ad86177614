# The README's commands. Everything installs itself into .venv on first use (make lab: into .venv-lab).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# make lab's own environment: the notebooks and JupyterLab only (requirements-lab.txt)
LAB_VENV  := .venv-lab
LAB_BIN   := $(LAB_VENV)/bin
# the kernel's websocket without Nagle's algorithm: a slider's answer is not held 40 ms (posenc.book.lab_server)
LAB_NODELAY := --ServerApp.kernel_websocket_connection_class=posenc.book.lab_server.NoDelayConnection
# the book's JupyterLab extension and settings from the package's folders (posenc.book.lab_server: folded
# solutions after Run All and a save, numbers whatever the timing, links between chapters; every cell in
# the page), the repository served (so chapters reach ../images) with the file browser opened on chapters/
LAB_EXTENSION := --LabServerApp.extra_labextensions_path=$(CURDIR)/src/posenc/book/labextensions \
	--LabServerApp.app_settings_dir=$(CURDIR)/src/posenc/book/lab_settings
LAB_ROOT := --ServerApp.root_dir=$(CURDIR) --LabApp.default_url=/lab/tree/chapters
LAB_STAMP := $(LAB_VENV)/.installed

.PHONY: book test check lab lab-extension bench bench-lab lint student teacher book-student clean help

help:
	@echo "make book   build the website into _build/html (creates .venv, installs)"
	@echo "make test   run every test: library, notebooks, book build (creates .venv, installs)"
	@echo "make check  the quick loop for contributors: ruff + the library and course tests (no book, no browser)"
	@echo "make lab    open the notebooks in JupyterLab (creates .venv-lab: the notebooks' needs only)"
	@echo "make lab-extension  rebuild the book's JupyterLab extension (contributors; needs Node.js and npm)"
	@echo "make bench  run the kernel benchmark (ratios against transformers and a plain copy)"
	@echo "make bench-lab  each live control's latency in JupyterLab (a table per control)"
	@echo "make lint   ruff check"
	@echo "make student  write the student edition (solutions removed) to _build/student/"
	@echo "make teacher  write the teacher edition (solutions, points, rubrics) to _build/teacher/"
	@echo "make book-student  build the website without solutions into _build/student-site/_build/html"
	@echo "make clean  remove build outputs (keeps .venv and .venv-lab)"

# (Re)install when the requirements or the package metadata change.
$(STAMP): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@touch $(STAMP)

# POSENC_STATIC=1 makes every explorer render its website form (a self-contained player)
# instead of live ipywidgets. The execution cache only notices changes to the notebooks themselves; a change under
# src/ (its Python, or the player's files in _book_static, which each explorer's output carries) must re-execute
# every chapter, or the figures silently show the old library.
SRC_HASH = $(shell find src \( -name '*.py' -o -path '*/_book_static/*' \) -type f -print0 | sort -z | xargs -0 cat | sha256sum | cut -c1-16)

book: $(STAMP)
	@mkdir -p _build
	@if [ "$$(cat _build/.src-hash 2>/dev/null)" != "$(SRC_HASH)" ]; then \
		echo "src/ changed since the last build: re-executing every chapter"; \
		rm -rf _build/.jupyter_cache && POSENC_STATIC=1 $(BIN)/jupyter-book build --all . ; \
	else \
		POSENC_STATIC=1 $(BIN)/jupyter-book build . ; \
	fi
	@echo "$(SRC_HASH)" > _build/.src-hash
	@echo ""
	@echo "The book is at: $(CURDIR)/_build/html/index.html"

# The browser tests need Debian's chromium: installed first where that can be done (root, apt-get),
# else one line says they will be skipped and how to install it.
test: $(STAMP)
	@bash .ci/install-chromium
	$(BIN)/python -m pytest -n 2 --dist loadscope

# The contributors' quick loop: lint, then every test that builds no book, opens no browser,
# executes no chapter and trains no model (see tests/conftest.py for what counts as slow).
# Byte code is cached between runs (env -u: some machines set PYTHONDONTWRITEBYTECODE, which makes every
# run recompile the package and re-rewrite the tests' asserts; __pycache__ is ignored by git).
# The checkers run the student's function in a thread here, not in a forked process (a fork of a
# process holding torch costs 20-35 ms on these machines, and the quick loop runs several hundred checks).
# The verdicts are the same, and the result makes the same pickle round trip; what a thread cannot do
# (stop an endless loop, keep a crash or printed output apart) is tested in both ways by
# tests/test_course_engine.py, which forks in both commands. `make test` checks in forked processes,
# as a student's notebook does.
check: $(STAMP)
	$(BIN)/ruff check src tests benchmarks teacher
	env -u PYTHONDONTWRITEBYTECODE POSENC_CHECK_ISOLATION=thread $(BIN)/python -m pytest -q -m "not book and not slow" -p no:cacheprovider -n 2

# Jupyter refuses to run as root unless told to (containers often run as root).
ALLOW_ROOT = $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

# JupyterLab gets a virtual environment of its own, with only what the chapters need
# (requirements-lab.txt: posenc with its book extra, torch as a CPU wheel, JupyterLab and
# jupyterlab-myst, all pinned): a fraction of .venv's size, and .venv stays as make book and
# make test need it (1.3 GB installed, 0.75 GB of it torch). pip shows its progress.
$(LAB_STAMP): requirements-lab.txt pyproject.toml
	@test -x $(LAB_BIN)/python || $(PYTHON) -m venv $(LAB_VENV)
	$(LAB_BIN)/python -m pip install --upgrade pip
	$(LAB_BIN)/python -m pip install -r requirements-lab.txt
	@touch $(LAB_STAMP)

lab: $(LAB_STAMP)
	$(LAB_BIN)/jupyter lab $(ALLOW_ROOT) $(LAB_NODELAY) $(LAB_EXTENSION) $(LAB_ROOT)

# The extension's built files are committed (a reader needs no Node.js); after a change to
# src/posenc/book/lab_extension/, rebuild them (tests/test_lab_extension.py checks they match the sources).
lab-extension: $(STAMP)
	bash src/posenc/book/lab_extension/build.sh $(BIN)/jupyter

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_kernels.py

# each live control's latency in JupyterLab, from the input event to the new figure painted
bench-lab: $(STAMP)
	$(BIN)/python benchmarks/bench_jupyterlab.py

student: $(STAMP)
	$(BIN)/python -m posenc.course student chapters _build/student

teacher: $(STAMP)
	$(BIN)/python -m posenc.course teacher chapters _build/teacher

# The website without solutions: a copy of the book whose chapters are the student edition.
book-student: $(STAMP)
	$(BIN)/python -m posenc.course site . _build/student-site
	POSENC_STATIC=1 $(BIN)/jupyter-book build --all _build/student-site
	@echo "The student website is at: $(CURDIR)/_build/student-site/_build/html/index.html"

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks teacher

clean:
	rm -rf _build .pytest_cache .hypothesis
