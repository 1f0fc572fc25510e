#!/usr/bin/env bash
# The prepared GPU check, on a machine with a GPU, torch (CUDA build) and pytest, no Docker, no
# otter: run as root from a copy of this repository's working tree that carries the three paths
# `make gpu-bundle` writes (about 4 MiB in all; docs/runners.md):
#   build/gpu-bundle  build/autograd-exercises/autograd-exercises-autograder.zip
#   build/autograd-porting/autograd-porting-autograder.zip
#   bash gpu/run.sh [--allow-cpu] [--confinement namespaces|container|auto]
# One run, at most 9 minutes (the device's limit is 10); $OUT/gpu-check.json when OUT is set.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
SITE=${GPU_CHECK_SITE:-/tmp/gpu-check-site}
# only what the judge lacks comes in, offline, beside the machine's own torch (not into it):
# the judge imports them from PYTHONPATH; the sandboxed workers need torch and numpy only
"$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --disable-pip-version-check --upgrade --target "$SITE" \
    --find-links build/gpu-bundle -r build/gpu-bundle/requirements.txt
export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
exec timeout 540 "$PYTHON" gpu/check.py "$@"
