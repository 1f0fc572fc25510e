#!/usr/bin/env bash
# setup.sh of the Gradescope zip (autograder.authoring.gradescope writes it into the zip).
#
# On the grading image (`make image`) the venv /opt/autograder-env is prebuilt: nothing is
# downloaded. On any other base (Gradescope's own Ubuntu images, plain Debian) it builds that
# venv the way docker/Dockerfile does:
#   1. a Python >= 3.11 with venv; when the base has none, the distribution's own packages
#      (apt): python3 where new enough (Ubuntu 24.04, Debian 12), else python3.13/3.12/3.11
#      (Ubuntu 22.04 ships python3.11 in universe);
#   2. torch (CPU build) from TORCH_INDEX_URL (default PyTorch's CPU index): PyPI's Linux torch
#      is the CUDA build, ~2.5 GB more to download for nothing;
#   3. the pinned deps (otter-grader[grading] and the rest, wheels/requirements.lock) from
#      PyPI, or PIP_INDEX_URL when set;
#   4. the `autograder` package (not on PyPI) from the wheel this zip carries (wheels/);
#   5. the worker's own code to /opt/agworker, the rest of the package made root-only, so
#      that student code (run as an unprivileged uid) cannot read the checks.
set -euo pipefail

ENV_DIR=/opt/autograder-env
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TORCH_INDEX_URL=${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}
TORCH_SPEC=@TORCH_SPEC@
CHECK='import autograder, otter, torch; print("grading env ok: torch", torch.__version__, "otter", otter.__version__)'

if [ -x "$ENV_DIR/bin/python" ] && "$ENV_DIR/bin/python" -c "$CHECK" 2>/dev/null; then
    echo "prebuilt grading env found at $ENV_DIR: nothing to install"
    exit 0
fi

fail() { echo "setup.sh: error: $*" >&2; exit 1; }

# A python on PATH that is >= 3.11 and can make a venv (Debian and Ubuntu strip ensurepip out
# of python3 into python3-venv / python3.X-venv).
find_python() {
    local py
    for py in python3.13 python3.12 python3.11 python3; do
        if command -v "$py" >/dev/null 2>&1 && "$py" -c \
            'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            command -v "$py"
            return 0
        fi
    done
    return 1
}

if ! PY=$(find_python); then
    command -v apt-get >/dev/null || fail "no Python >= 3.11 with venv on this base and no apt-get to install one; pick an Ubuntu 24.04 base image (see docs/gradescope.md)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    candidate=$(apt-cache policy python3 2>/dev/null | awk '/Candidate:/ {print $2}')
    if [ -n "$candidate" ] && [ "$candidate" != "(none)" ] && dpkg --compare-versions "$candidate" ge 3.11; then
        packages="python3 python3-venv"
    else
        packages=""
        for v in 3.13 3.12 3.11; do
            if apt-cache show "python$v-venv" >/dev/null 2>&1; then
                packages="python$v python$v-venv"
                break
            fi
        done
    fi
    [ -n "$packages" ] || fail "this base's distribution ships no Python >= 3.11 (python3 is ${candidate:-missing}); pick an Ubuntu 24.04 base image (see docs/gradescope.md)"
    echo "installing $packages from the distribution"
    apt-get install -y -q --no-install-recommends $packages
    PY=$(find_python) || fail "installed $packages but found no usable Python >= 3.11"
fi
echo "using $PY ($("$PY" --version))"

rm -rf "$ENV_DIR"
"$PY" -m venv "$ENV_DIR"
# --no-compile, then compileall on every core, as docker/Dockerfile does: pip compiles one file
# at a time (minutes for torch, sympy, pandas); compileall exits 1 for the few templates that
# are not Python 3 code, which pip skips too
PIP=("$ENV_DIR/bin/python" -m pip --disable-pip-version-check --no-cache-dir install --no-compile)
# --no-deps: only torch from PyTorch's index; its deps are pinned in the lock (from PyPI)
"${PIP[@]}" --no-deps --index-url "$TORCH_INDEX_URL" "$TORCH_SPEC"
"${PIP[@]}" -r "$HERE/wheels/requirements.lock"
"${PIP[@]}" --no-deps "$HERE"/wheels/autograder-*.whl
"$ENV_DIR/bin/python" -m autograder.running.entry.container --install-worker /opt/agworker
site=$("$ENV_DIR/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$ENV_DIR/bin/python" -m compileall -q -j 0 "$site" > /dev/null || true
package=$("$ENV_DIR/bin/python" -c 'import autograder, os; print(os.path.dirname(autograder.__file__))')
chmod -R go-rwx "$package"
"$ENV_DIR/bin/python" -c "$CHECK"
