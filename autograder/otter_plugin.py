"""An otter plugin that makes a missing ``autograder`` package stop stock otter loudly.

The hidden tests in the autograder zip call ``autograder.harness.expect``. Run by stock
``otter run`` / ``otter grade`` where this package is not installed, each hidden test would
fail on its own import, inside its own output, and the notebook would get a quietly low score
(16.25/21 scored 3.5/21). The masters' assignment config lists this plugin, so otter writes it
into the zip's ``otter_config.json``; otter imports every listed plugin before it runs the
notebook (``PluginCollection``), so without the package grading stops there with
``ModuleNotFoundError: No module named 'autograder'``: ``otter run`` exits non-zero and
``otter grade`` records that error as the submission's grading status, never a score.

The plugin itself then checks that the checks load here (torch included) before any notebook
runs, for the same reason.
"""

from __future__ import annotations

from otter.plugins import AbstractOtterPlugin

#: the name to list under ``plugins:`` in a master's assignment config
NAME = f"{__name__}.RequireAutograder"


class RequireAutograder(AbstractOtterPlugin):
    """Importing this module is the check; ``before_grading`` also loads the checks."""

    def before_grading(self, config) -> None:
        try:
            from . import harness  # noqa: F401 - the checks, and torch with them
        except ImportError as exc:
            raise RuntimeError(f"the autograder package is installed but its checks cannot "
                               f"load ({exc}): install the course's requirements") from exc
