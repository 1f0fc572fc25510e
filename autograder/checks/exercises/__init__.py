"""Checks for the ``autograd-exercises`` assignment."""

from __future__ import annotations

from functools import partial

from ..registry import Check, index
from . import accumulation, export, multipath, saved, vjp

ASSIGNMENT = "autograd-exercises"

CHECKS = index([
    Check(ASSIGNMENT, accumulation.QUESTION, "square_grads_uncleared", ("square_grads",),
          "square_grads(p0, repeats, clear=False) on fresh leaf values (negative, fractional, "
          "large) and repeat counts: the gradient must grow by 2*p0 each backward.",
          partial(accumulation.check_square_grads, clear=False)),
    Check(ASSIGNMENT, accumulation.QUESTION, "square_grads_cleared", ("square_grads",),
          "square_grads(p0, repeats, clear=True) on fresh leaf values and repeat counts: every "
          "gradient must be 2*p0.",
          partial(accumulation.check_square_grads, clear=True)),
    Check(ASSIGNMENT, accumulation.QUESTION, "reuse_raises", ("reuse_raises",),
          "reuse_raises against the grader's own run of the experiment in this torch build.",
          accumulation.check_reuse_raises),
    Check(ASSIGNMENT, saved.QUESTION, "count_saved_tracked", ("count_saved",),
          "count_saved(net, inputs, True) on fresh Linear/ReLU/Tanh/Sigmoid stacks in float32 "
          "and float64, called repeatedly, against the grader's own hook run on the same net.",
          partial(saved.check_count_saved, track=True)),
    Check(ASSIGNMENT, saved.QUESTION, "count_saved_untracked", ("count_saved",),
          "count_saved(net, inputs, False) on fresh networks, called repeatedly: a no_grad "
          "forward saves nothing.",
          partial(saved.check_count_saved, track=False)),
    Check(ASSIGNMENT, multipath.QUESTION, "multipath_grads", ("multipath_grads",),
          "multipath_grads(x0, y0) on fresh points, floats and ints, against (2*x0 + y0, x0).",
          partial(multipath.check_grads, split=False)),
    Check(ASSIGNMENT, multipath.QUESTION, "split_path_grads", ("split_path_grads",),
          "split_path_grads(x0, y0) on fresh points, floats and ints, against (y0, 2*x0).",
          partial(multipath.check_grads, split=True)),
    Check(ASSIGNMENT, vjp.QUESTION, "vjp_square_values", ("vjp_square",),
          "vjp_square(x, weights) on fresh 1-D and 2-D float32/float64 inputs against "
          "2 * x * weights in float64, dtype kept.",
          vjp.check_vjp),
    Check(ASSIGNMENT, vjp.QUESTION, "vjp_square_leaves_inputs", ("vjp_square",),
          "vjp_square called twice on the same x: x and weights keep their values, x gets no "
          "gradient and no requires_grad.",
          vjp.check_untouched),
    Check(ASSIGNMENT, export.QUESTION, "export_numpy_values", ("export_numpy",),
          "export_numpy(t) on fresh tensors (tracked or not, float32/float64/int64, "
          "non-contiguous views): same shape, dtype and values.",
          export.check_export),
    Check(ASSIGNMENT, export.QUESTION, "export_numpy_independent", ("export_numpy",),
          "export_numpy(t) on fresh tensors, then a write to the result: t and the tensor it "
          "views must not change.",
          export.check_independent),
])
