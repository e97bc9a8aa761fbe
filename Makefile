# `make demo` and `make test` each work on a fresh machine with Python >= 3.11:
# they create .venv, install einc into it, then run.
# The first interpreter that really runs and is >= 3.11 (pyenv shims may exist but fail).
PYTHON ?= $(shell for p in python3 python3.13 python3.12 python3.11; do \
	$$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && { echo $$p; break; }; done)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test docs bench fuzz clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,cuda,torch,jax,docs,distributed]' 'torch==2.13.0'  # the CPU build (a local file here; plain torch pulls GBs of CUDA)
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/einc demo

test: $(STAMP)
	$(PY) -m pytest -q

# The documentation site in site/: the real command output and benchmark charts the pages
# show are regenerated first (scripts/docs_examples.py), then a strict build.
docs: $(STAMP)
	$(PY) scripts/docs_examples.py
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

fuzz: $(STAMP)
	$(PY) scripts/fuzz.py

bench: $(STAMP)
	$(VENV)/bin/einc bench --backend cpu

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis site docs/generated docs/figures
