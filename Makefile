# JointLab: `make demo` and `make test` are the whole set-up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-test

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The test extra plus the RL extras: stable-baselines3 and Ray RLlib, torch pinned to the
# 2.13.0 CPU build (a looser pin would pull a multi-GB CUDA build).
$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -e ".[test,rl,distributed]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/jointlab demo --out demo_output

test: $(STAMP)
	$(BIN)/ruff check jointlab tests benchmarks examples
	$(BIN)/python -m pytest -n 2 --timeout 600 tests --nbmake notebooks

lint: $(STAMP)
	$(BIN)/ruff check jointlab tests benchmarks examples
	$(BIN)/ruff format --check jointlab tests benchmarks examples

bench: $(STAMP)
	$(BIN)/jointlab bench

clean:
	rm -rf $(VENV) demo_output .pytest_cache .ruff_cache
