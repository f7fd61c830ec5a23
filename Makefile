# Every target sets up .venv itself, so a fresh clone needs nothing but python3 (>= 3.11).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.installed
SMDEBUG_VENV := .venv-smdebug
TRITON_SITE := .triton
PYTEST_ARGS ?=

.PHONY: demo test bench gpu-check fuzz venv smdebug-venv mxnet-venv sdk3-venv clean lint notebooks

$(STAMP): setup.py setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# torch 2.13.0 is a CPU wheel on local disk; install it first so the extras' torch range is already met.
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[sdk2,torch,xgboost,integrations,test]'
	# TensorFlow (CPU) + Keras 3 (and JAX, Keras' other backend) for the Keras hook; a failed install leaves
	# those tests skipped with a reason.
	$(PIP) install --quiet -e '.[tensorflow]' || echo "tensorflow-cpu/keras could not be installed; TensorFlow tests will be skipped"
	$(PIP) install --quiet -e '.[jax]' || echo "jax could not be installed; the Keras JAX-backend test will be skipped"
	# Triton (which PyTorch's CUDA wheels bring, not the CPU one), in a folder of its own: the test of the fused
	# CUDA reductions runs their kernel under Triton's interpreter in a subprocess with this folder on its path.
	# Not in .venv: there torch._dynamo would import it, and it aborts a process that has loaded TensorFlow.
	$(PIP) install --quiet --no-deps --upgrade --target $(TRITON_SITE) 'triton>=3.0' || echo "triton could not be installed; the fused kernel's interpreter test will be skipped"
	touch $(STAMP)

venv: $(STAMP)

# Reference venv with the real smdebug 1.0.34, used only as a test oracle and benchmark baseline.
# Best effort: tests and benchmarks that need it skip with a visible reason when it cannot be built.
$(SMDEBUG_VENV)/.installed:
	-( $(PYTHON) -m venv $(SMDEBUG_VENV) && \
	  $(SMDEBUG_VENV)/bin/python -m pip install --quiet 'smdebug==1.0.34' 'numpy<2' 'protobuf==3.20.3' requests 'pandas<2.3' psutil 'xgboost==1.7.6' 'scipy<1.14' 'setuptools<70' && \
	  touch $(SMDEBUG_VENV)/.installed ) || echo "smdebug reference venv could not be built; oracle tests will be skipped"

# torch in the reference venv too (the local CPU wheel), for the PyTorch differential tests.
$(SMDEBUG_VENV)/.torch: $(SMDEBUG_VENV)/.installed
	# torch pulls setuptools >= 77, which has no pkg_resources; smdebug.xgboost imports it: pin it back after.
	-( $(SMDEBUG_VENV)/bin/python -m pip install --quiet torch==2.13.0 'numpy<2' && \
	  $(SMDEBUG_VENV)/bin/python -m pip install --quiet 'setuptools<70' && touch $@ ) || \
	  echo "torch could not be installed in the smdebug reference venv; PyTorch oracle tests will be skipped"

smdebug-venv: $(SMDEBUG_VENV)/.installed $(SMDEBUG_VENV)/.torch

# MXNet 1.9.1 (retired upstream) needs NumPy < 1.24, so it cannot share .venv (TensorFlow 2.21 needs
# NumPy >= 1.26): the MXNet hook is tested in a venv of its own holding mxnet, this package (no
# SDK: the hook side needs only its light dependencies) and, as the oracle, smdebug 1.0.34 in another.
# Best effort: the MXNet tests skip with a visible reason when these cannot be built.
MXNET_VENV := .venv-mxnet
SMDEBUG_MXNET_VENV := .venv-smdebug-mxnet
MXNET_PINS := 'mxnet==1.9.1' 'numpy==1.23.5'
$(MXNET_VENV)/.installed: setup.cfg
	-( $(PYTHON) -m venv $(MXNET_VENV) && \
	  $(MXNET_VENV)/bin/python -m pip install --quiet $(MXNET_PINS) attrs crc32c psutil smdebug-rulesconfig pytest && \
	  $(MXNET_VENV)/bin/python -m pip install --quiet --no-deps -e . && touch $@ ) || \
	  echo "the MXNet venv could not be built; MXNet tests will be skipped"
$(SMDEBUG_MXNET_VENV)/.installed:
	-( $(PYTHON) -m venv $(SMDEBUG_MXNET_VENV) && \
	  $(SMDEBUG_MXNET_VENV)/bin/python -m pip install --quiet 'smdebug==1.0.34' $(MXNET_PINS) 'protobuf==3.20.3' 'pandas<2' psutil 'setuptools<70' && \
	  touch $@ ) || echo "the smdebug MXNet reference venv could not be built; MXNet oracle tests will be skipped"

mxnet-venv: $(MXNET_VENV)/.installed $(SMDEBUG_MXNET_VENV)/.installed

# SDK v3 (sagemaker 3.x) cannot share .venv with SDK v2 (one distribution name): sagemaker_debugger_ext.train
# is tested in a venv of its own, with the [sdk3] extra, torch (the local CPU wheel, first: any other torch
# spec downloads gigabytes) and the few test tools; tests/train/test_sdk3_venv.py runs its tests there.
# Best effort: those tests skip with a visible reason when it cannot be built.
SDK3_VENV := .venv-sdk3
$(SDK3_VENV)/.installed: setup.cfg
	-( $(PYTHON) -m venv $(SDK3_VENV) && \
	  $(SDK3_VENV)/bin/python -m pip install --quiet torch==2.13.0 && \
	  $(SDK3_VENV)/bin/python -m pip install --quiet -e '.[sdk3]' pytest pytest-timeout 'moto[server,s3]>=5' && \
	  touch $@ ) || echo "the SDK v3 venv could not be built; the SDK v3 tests will be skipped"

sdk3-venv: $(SDK3_VENV)/.installed

demo: $(STAMP)
	$(VENV)/bin/sagemaker-debugger-ext demo

# Coverage of the test processes (pytest-cov, works with xdist); the floor is fail_under in pyproject.toml.
test: $(STAMP) smdebug-venv mxnet-venv sdk3-venv
	$(PY) -m pytest -n 2 --cov --cov-report=term $(PYTEST_ARGS)

# The reader's seeded fuzz test at full length (make test runs 4,000 cases; FUZZ_SEED=N for another seed).
FUZZ_CASES ?= 20000
fuzz: $(STAMP)
	FUZZ_CASES=$(FUZZ_CASES) FUZZ_REPORT=fuzz-report.json $(PY) -m pytest -n 0 -s tests/trials/test_trials_fuzz.py

# Each notebook from its jupytext script (notebooks/NN-name.py), executed in a scratch folder and written
# with its outputs (NOTEBOOKS="01-quickstart 03-trial-analysis" for some); tests/notebooks checks they match.
NOTEBOOKS ?=
notebooks: $(STAMP)
	$(PY) notebooks/_make.py $(NOTEBOOKS)

bench: $(STAMP) smdebug-venv
	$(PY) -m benchmarks

# On a machine with a CUDA GPU: the tests marked gpu (skipped elsewhere) and the GPU benchmark.
gpu-check: $(STAMP)
	$(PY) -m pytest -p no:cacheprovider -m gpu tests -q
	$(PY) -m benchmarks lm_gpu

# Pinned linters; their configuration is in pyproject.toml.
LINT_TOOLS := ruff==0.17.6 import-linter==2.16 mypy==2.4.1
LINT_PATHS := sagemaker_debugger_ext tests benchmarks notebooks examples docs

lint: $(STAMP)
	$(PIP) install --quiet $(LINT_TOOLS)
	$(VENV)/bin/ruff check $(LINT_PATHS)
	$(VENV)/bin/ruff format --check $(LINT_PATHS)
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) $(SMDEBUG_VENV) $(MXNET_VENV) $(SMDEBUG_MXNET_VENV) $(SDK3_VENV) $(TRITON_SITE) build dist *.egg-info
