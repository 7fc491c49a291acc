# The two commands of the README: `make demo` and `make test`.
# Both set up .venv on a fresh machine first (Python >= 3.10 as `python3`).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEMO_OUT ?= demo-out
RANKS  ?= 4

.PHONY: all venv demo test lint bench clean

all: test

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Reinstall when the project's dependency list or the C ledger changes (the editable
# install compiles cslint/runtime/_ledger.c in place; see setup.py).
$(STAMP): pyproject.toml setup.py cslint/runtime/_ledger.c | $(PY)
	$(PY) -m pip install --quiet -e '.[validate,dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) -m tensorrt_llm_patch.demo --out $(DEMO_OUT) --ranks $(RANKS)

test: $(STAMP)
	$(PY) -m pytest

# The whole checkout, minus what [tool.cslint] excludes (the replica and the
# test corpora hold deliberate hazards) and what git ignores.
lint: $(STAMP)
	$(VENV)/bin/cslint check .

bench: $(STAMP)
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) $(DEMO_OUT) .cslint_cache .pytest_cache
