# `make demo` and `make test` each work on a fresh machine with Python >= 3.11:
# they create .venv, install einc into it, then run.
PYTHON ?= $(shell command -v python3.12 || command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench fuzz clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/einc demo

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(VENV)/bin/einc bench --backend cpu

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
