"""What each hidden check proves, one sentence per check, for the student's feedback.

Plain text, no torch: the reports read it without importing the checks (``autograder report``
pays no ``import torch``). The registries (``exercises``, ``porting``) take each check's
sentence from here (``Check.proves``), and ``registry.index`` refuses a check without one.
A sentence says what was checked, never the hidden inputs' generator.
"""

from __future__ import annotations

#: assignment -> ``question/name`` -> the sentence.
PROVES: dict[str, dict[str, str]] = {
    "autograd-exercises": {
        "q1_accumulation/square_grads_uncleared":
            "square_grads(p0, repeats, clear=False) on fresh leaf values (negative, fractional, "
            "large) and repeat counts: the gradient must grow by 2*p0 each backward.",
        "q1_accumulation/square_grads_cleared":
            "square_grads(p0, repeats, clear=True) on fresh leaf values and repeat counts: every "
            "gradient must be 2*p0.",
        "q1_accumulation/reuse_raises":
            "reuse_raises against the grader's own run of the experiment in this torch build.",
        "q2_saved/count_saved_tracked":
            "count_saved(net, inputs, True) on fresh Linear/ReLU/Tanh/Sigmoid stacks in float32 "
            "and float64, called repeatedly, against the grader's own hook run on the same net.",
        "q2_saved/count_saved_untracked":
            "count_saved(net, inputs, False) on fresh networks, called repeatedly: a no_grad "
            "forward saves nothing.",
        "q3_multipath/multipath_grads":
            "multipath_grads(x0, y0) on fresh points, floats and ints, and points where one "
            "path is orders of magnitude below the other, against (2*x0 + y0, x0).",
        "q3_multipath/split_path_grads":
            "split_path_grads(x0, y0) on fresh points, floats and ints, and points where one "
            "path is orders of magnitude below the other (each gradient within a tolerance of "
            "its own size), against (y0, 2*x0).",
        "q4_vjp/vjp_square_values":
            "vjp_square(x, weights) on fresh 1-D and 2-D float32/float64 inputs against 2 * x * "
            "weights in float64, dtype kept.",
        "q4_vjp/vjp_square_leaves_inputs":
            "vjp_square called twice on the same x: x and weights keep their values, x gets no "
            "gradient and no requires_grad.",
        "q5_numpy/export_numpy_values":
            "export_numpy(t) on fresh tensors (tracked or not, float32/float64/int64, "
            "non-contiguous views): same shape, dtype and values.",
        "q5_numpy/export_numpy_independent":
            "export_numpy(t) on fresh tensors, then a write to the result: t and the tensor it "
            "views must not change.",
    },
    "autograd-porting": {
        "q1_logreg/train_logreg_losses":
            "train_logreg on fresh data sets, learning rates and step counts: the loss "
            "trajectory must match the grader's own training run (float32 tolerances).",
        "q1_logreg/train_logreg_params":
            "train_logreg on fresh data sets: the final w and b must match the grader's.",
        "q1_logreg/logreg_grads":
            "logreg_grads at random points of fresh problems, against autograd in float64.",
        "q1_logreg/train_logreg_regimes":
            "train_logreg with one step, on separable data whose loss falls far over many steps, "
            "and with unscaled features (large gradients): losses, w and b against the grader's.",
        "q1_logreg/logreg_grads_trained":
            "logreg_grads at the point train_logreg returns (leaves that require grad, with a "
            ".grad), leaving those tensors as they were.",
        "q2_microbatch/weighted_sizes":
            "accumulated_grad with unequal micro-batch sizes equals the full-batch mean gradient.",
        "q2_microbatch/stale_grad_cleared":
            "accumulated_grad when w arrives with a stale .grad from earlier work.",
        "q2_microbatch/same_objects_twice":
            "accumulated_grad twice on the same w, X, y and sizes list: the right answer both "
            "times, and everything but w.grad left as it was (values, hooks, the list).",
        "q3_gradcheck/forward":
            "my_op and MyOp.apply on fresh float64 inputs, against the formula in float64.",
        "q3_gradcheck/backward":
            "MyOp's backward with non-unit upstream gradients, against the analytic gradient.",
        "q3_gradcheck/gradcheck":
            "torch.autograd.gradcheck of MyOp.apply on fresh float64 inputs away from 0.",
        "q3_gradcheck/two_graphs":
            "MyOp.apply on two inputs before either backward: each graph's backward uses its own "
            "input (kept on ctx, not on the class or in a global).",
        "q3_gradcheck/check_my_op":
            "check_my_op returns True for a correct op and False for one with a wrong backward, "
            "leaving the caller's x as it was (a float64 copy is checked).",
        "q3_gradcheck/check_my_op_at_x":
            "check_my_op about ops wrong only for negative entries, only where a gradient "
            "component is 0, or by 1e-6: gradcheck's verdict at the x given (eps=1e-6, "
            "atol=1e-8).",
        "q4_device/pick_device":
            "pick_device with cuda and mps availability simulated in every combination.",
        "q4_device/predict_values":
            "predict with a dropout model on the grading machine's device, against a CPU "
            "reference in eval mode.",
        "q4_device/predict_after_move":
            "predict across a real device change (CPU to CUDA, or to meta without a GPU).",
        "q4_device/predict_no_graph":
            "predict with a model whose output shifts while autograd records through it: the "
            "forward must run without recording (no_grad or inference_mode).",
        "q4_device/make_optimizer":
            "make_optimizer on the grading machine's device: SGD, the lr asked for (0.0 "
            "included), the model's own parameters.",
        "q4_device/make_optimizer_after_move":
            "make_optimizer across a device change where moving makes new parameter objects.",
    },
}


def proves(assignment: str, key: str) -> str | None:
    """The sentence of check ``key`` (``"q1_accumulation/reuse_raises"``) of ``assignment``,
    or ``None`` for a check this grader does not know."""
    return PROVES.get(assignment, {}).get(key)
