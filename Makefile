# One venv holds everything: pinned torch (CPU wheel), otter-grader[grading], the autograder package.
VENV    ?= .venv
PY      := $(VENV)/bin/python
AG      := $(VENV)/bin/autograder
JOBS    ?= 2
SUBMISSIONS ?= submissions
OUT     ?= out
# Where torch 2.13.0+cpu comes from (the host venv and the CPU image); empty: pip's own config
# only (e.g. PIP_FIND_LINKS=/path/to/wheelhouse offline). See docker/torch_wheel.py.
TORCH_INDEX_URL ?= https://download.pytorch.org/whl/cpu
export TORCH_INDEX_URL
# The CUDA image's torch build (PyTorch's per-CUDA index, download.pytorch.org/whl/<build>):
# cu126 (CUDA 12.6) and cu128 (CUDA 12.8, Blackwell GPUs) run on NVIDIA drivers >= 525,
# cu130 (CUDA 13.0) needs >= 580. TORCH_CUDA_INDEX_URL overrides the index.
CUDA_BUILD ?= cu126
export CUDA_BUILD

.PHONY: install assign check-assign grade test test-extended test-all test-fast bytecode lint clean image image-gpu grade-gpu \
	gradescope benchmark gpu-bundle

## The grading image (docker/Dockerfile): wheelhouse built here, then `docker build` through
## the Engine API; the debian:bookworm-slim base is debootstrapped when missing (no registry).
image: install
	$(PY) docker/build_image.py --variant cpu

## The CUDA variant (torch's $(CUDA_BUILD) build; needs the NVIDIA container toolkit to run).
## Refuses, before any download, when this host's driver is too old for that build.
image-gpu: install
	$(PY) docker/build_image.py --variant cuda

## Grade in CUDA containers with every GPU; fails with the reason when the driver is too old
## for $(CUDA_BUILD), a GPU is not in the Default compute mode, or the engine cannot give
## containers a GPU (never a silent CPU run), checked before the 2.6 GB of CUDA wheels.
grade-gpu: install
	$(PY) docker/build_image.py --variant cuda --require-gpu
	$(AG) grade -p $(SUBMISSIONS) -o $(OUT) --runner docker-gpu

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml docker/torch_wheel.py
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) docker/torch_wheel.py install
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $@

## Run otter assign on both masters (stops if a solution fails its own tests); writes
## student_templates/, solutions/ and build/<assignment>/<assignment>-autograder.zip.
assign: install
	$(AG) assign

## Fail if the committed templates/solutions differ from a fresh otter assign.
check-assign: install
	$(AG) assign --check

## The main job: grade every notebook under submissions/ into out/<assignment>/final_grades.csv.
## Also writes the reports: out/<a>/feedback/, out/<a>/report/class_report.html,
## out/<a>/canvas_gradebook.csv (ROSTER=file.csv maps files to student ids), out/<a>/results.jsonl.
## With a Docker engine: builds the grading image if needed (cached) and grades in containers;
## without one, says so and grades with the local sealed runner (root).
grade: install
	$(PY) docker/build_image.py --if-engine
	$(AG) grade -p $(SUBMISSIONS) -o $(OUT) $(if $(ROSTER),--roster $(ROSTER))

## The suite (under 7 minutes on 2 cores): every check, and every way of grading once with real
## otter, real notebooks and containers. `make test-extended` runs the rest (the blind rounds,
## the variant catalogue, the container runners' repeats, fresh-machine installs); CI runs both,
## `make test-all` all of it in one run (docs/testing.md). With a Docker engine, the grading
## image is rebuilt first when the checkout's sources changed (cached: a check of the inputs'
## hash): a stale image fails every container test.
SUITE = $(PY) -m pytest -n $(JOBS) --dist loadgroup -p no:cacheprovider

test: install bytecode
	$(PY) docker/build_image.py --if-engine
	$(SUITE) -m "not extended"

test-extended: install bytecode
	$(PY) docker/build_image.py --if-engine
	$(SUITE) -m extended

test-all: install bytecode
	$(PY) docker/build_image.py --if-engine
	$(SUITE)

## The package's bytecode, written even where PYTHONDONTWRITEBYTECODE is set (as on CI
## machines): otherwise each of the suite's Python processes compiles the modules it imports.
bytecode: install
	$(PY) -m compileall -q autograder

## The fast part only (no otter, grader or container started).
test-fast: install bytecode
	$(PY) -m pytest -m "not slow" -p no:cacheprovider

## ruff, configured in pyproject.toml ([tool.ruff]); CI runs it before the tests.
lint: install
	$(VENV)/bin/ruff check .

clean:
	rm -rf build $(OUT)

## Gradescope / stock `otter grade` zips (build/<a>/<a>-gradescope.zip): the sealed judge on the
## grading image, or on a plain base (setup.sh builds the env), writes Gradescope's results.json
## and otter's results.pkl. HIDDEN_VISIBILITY=hidden|after_published|after_due_date|visible.
gradescope: install
	$(PY) -m autograder.authoring.gradescope $(if $(HIDDEN_VISIBILITY),--hidden-visibility $(HIDDEN_VISIBILITY))

## Throughput, every figure in one run: the floor (a solution and every hidden check in one
## process), each isolating mode per correct submission with --jobs 1, the same batches through
## stock `otter grade` (offline base, benchmarks/stock-otter/) and each of our modes at N=300 and
## N=1000 (ratios, memory, image sizes), the entry points' cold start. Needs root and a Docker
## engine; about an hour. Writes benchmarks/results/<date>-throughput.{json,md}.
benchmark: image assign
	$(PY) benchmarks/throughput.py --n 300,1000 --record

## The prepared GPU check's luggage (build/gpu-bundle/): wheels for what the judge needs beyond
## the GPU machine's torch, numpy and pytest. Then there: `bash gpu/run.sh` (see gpu/check.py).
gpu-bundle: install assign
	$(PY) gpu/bundle.py
