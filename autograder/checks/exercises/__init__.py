"""Checks for the ``autograd-exercises`` assignment."""

from __future__ import annotations

from functools import partial

from ..registry import Check, index
from . import accumulation, accumulation_reuse, export, multipath, saved, vjp, vjp_untouched

ASSIGNMENT = "autograd-exercises"

CHECKS = index([
    Check(ASSIGNMENT, accumulation.QUESTION, "square_grads_uncleared", ("square_grads",),
          partial(accumulation.check_square_grads, clear=False)),
    Check(ASSIGNMENT, accumulation.QUESTION, "square_grads_cleared", ("square_grads",),
          partial(accumulation.check_square_grads, clear=True)),
    Check(ASSIGNMENT, accumulation.QUESTION, "reuse_raises", ("reuse_raises",),
          accumulation_reuse.check_reuse_raises),
    Check(ASSIGNMENT, saved.QUESTION, "count_saved_tracked", ("count_saved",),
          partial(saved.check_count_saved, track=True)),
    Check(ASSIGNMENT, saved.QUESTION, "count_saved_untracked", ("count_saved",),
          partial(saved.check_count_saved, track=False)),
    Check(ASSIGNMENT, multipath.QUESTION, "multipath_grads", ("multipath_grads",),
          partial(multipath.check_grads, split=False)),
    Check(ASSIGNMENT, multipath.QUESTION, "split_path_grads", ("split_path_grads",),
          partial(multipath.check_grads, split=True)),
    Check(ASSIGNMENT, vjp.QUESTION, "vjp_square_values", ("vjp_square",),
          vjp.check_vjp),
    Check(ASSIGNMENT, vjp.QUESTION, "vjp_square_leaves_inputs", ("vjp_square",),
          vjp_untouched.check_untouched),
    Check(ASSIGNMENT, export.QUESTION, "export_numpy_values", ("export_numpy",),
          export.check_export),
    Check(ASSIGNMENT, export.QUESTION, "export_numpy_independent", ("export_numpy",),
          export.check_independent),
])
