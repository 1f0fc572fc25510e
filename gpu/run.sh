#!/usr/bin/env bash
# The prepared GPU check, on a machine with a GPU, torch (CUDA build) and pytest, no Docker, no
# otter: run as root from a copy of this repository that carries build/gpu-bundle/ (the wheels
# `make gpu-bundle` writes) and build/<assignment>/<assignment>-autograder.zip.
#   bash gpu/run.sh [--allow-cpu] [--confinement namespaces|container|auto]
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
exec timeout 280 "$PYTHON" gpu/check.py "$@"
