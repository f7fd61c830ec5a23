# Every target sets up .venv itself, so a fresh clone needs nothing but python3 (>= 3.11).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.installed
SMDEBUG_VENV := .venv-smdebug
PYTEST_ARGS ?=

.PHONY: demo test bench venv smdebug-venv clean lint

$(STAMP): setup.py setup.cfg
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# torch 2.13.0 is a CPU wheel on local disk; install it first so the extras' torch range is already met.
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[torch,xgboost,integrations,test]'
	touch $(STAMP)

venv: $(STAMP)

# Reference venv with the real smdebug 1.0.34, used only as a test oracle and benchmark baseline.
# Best effort: tests and benchmarks that need it skip with a visible reason when it cannot be built.
$(SMDEBUG_VENV)/.installed:
	-( $(PYTHON) -m venv $(SMDEBUG_VENV) && \
	  $(SMDEBUG_VENV)/bin/python -m pip install --quiet 'smdebug==1.0.34' 'numpy<2' 'protobuf==3.20.3' requests 'pandas<2.3' psutil && \
	  touch $(SMDEBUG_VENV)/.installed ) || echo "smdebug reference venv could not be built; oracle tests will be skipped"

# torch in the reference venv too (the local CPU wheel), for the PyTorch differential tests.
$(SMDEBUG_VENV)/.torch: $(SMDEBUG_VENV)/.installed
	-( $(SMDEBUG_VENV)/bin/python -m pip install --quiet torch==2.13.0 'numpy<2' && touch $@ ) || \
	  echo "torch could not be installed in the smdebug reference venv; PyTorch oracle tests will be skipped"

smdebug-venv: $(SMDEBUG_VENV)/.installed $(SMDEBUG_VENV)/.torch

demo: $(STAMP)
	$(VENV)/bin/sagemaker-debugger-ext demo

test: $(STAMP) smdebug-venv
	$(PY) -m pytest -n 2 $(PYTEST_ARGS)

bench: $(STAMP) smdebug-venv
	$(PY) -m benchmarks

lint: $(STAMP)
	$(PY) -m pip install --quiet ruff mypy
	$(PY) -m ruff check sagemaker_debugger_ext tests

clean:
	rm -rf $(VENV) $(SMDEBUG_VENV) build dist *.egg-info
