# One venv holds everything: pinned torch (CPU wheel), otter-grader[grading], the autograder package.
VENV    ?= .venv
PY      := $(VENV)/bin/python
AG      := $(VENV)/bin/autograder
JOBS    ?= 2
SUBMISSIONS ?= submissions
OUT     ?= out

.PHONY: install assign check-assign grade test test-fast clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
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
grade: install
	$(AG) grade -p $(SUBMISSIONS) -o $(OUT)

## Everything CI runs: fast checks, then real otter on real notebooks (a few minutes).
test: install
	$(PY) -m pytest -n $(JOBS) -p no:cacheprovider

## The fast part only (no otter subprocesses).
test-fast: install
	$(PY) -m pytest -m "not slow" -p no:cacheprovider

clean:
	rm -rf build $(OUT)
