"""TEST SHIM, not part of the grader: run stock `otter grade` on a Docker host without buildx.

python-on-whales' docker.build() always shells out to `docker buildx ...`; this host's CLI has
no buildx plugin, so the shim swaps in the classic builder (`docker build`), then hands control
to otter's normal CLI. Not needed where `docker buildx` exists. (Part of the
stock-otter baseline recipe, benchmarks/stock-otter/; tested with otter-grader 7.0.0.)

Usage: python docker/otter_grade_legacy.py grade [otter grade args...]
"""
import sys

from python_on_whales import docker


def _legacy_build(context_path, *, build_args=None, tags=(), file=None, load=True, **_ignored):
    return docker.legacy_build(context_path, build_args=build_args or {}, tags=tags, file=file, quiet=False)


docker.build = _legacy_build

from otter.cli import cli  # noqa: E402

if __name__ == "__main__":
    sys.exit(cli())
