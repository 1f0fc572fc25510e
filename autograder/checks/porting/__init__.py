"""Checks for the ``autograd-porting`` assignment."""

from __future__ import annotations

from functools import partial

from ..registry import Check, index
from . import (
    device,
    device_predict,
    gradcheck,
    logreg,
    logreg_grads,
    logreg_regimes,
    microbatch,
    recording,
    selfcheck,
)

ASSIGNMENT = "autograd-porting"

CHECKS = index([
    Check(ASSIGNMENT, logreg.QUESTION, "train_logreg_losses", ("train_logreg",),
          "train_logreg on fresh data sets, learning rates and step counts: the loss trajectory "
          "must match the grader's own training run (float32 tolerances).",
          partial(logreg.check_train_logreg, part="losses")),
    Check(ASSIGNMENT, logreg.QUESTION, "train_logreg_params", ("train_logreg",),
          "train_logreg on fresh data sets: the final w and b must match the grader's.",
          partial(logreg.check_train_logreg, part="params")),
    Check(ASSIGNMENT, logreg.QUESTION, "logreg_grads", ("logreg_grads",),
          "logreg_grads at random points of fresh problems, against autograd in float64.",
          logreg_grads.check_logreg_grads),
    Check(ASSIGNMENT, logreg.QUESTION, "train_logreg_regimes", ("train_logreg",),
          "train_logreg with one step, on separable data whose loss falls far over many steps, "
          "and with unscaled features (large gradients): losses, w and b against the grader's.",
          logreg_regimes.check_train_logreg_regimes),
    Check(ASSIGNMENT, logreg.QUESTION, "logreg_grads_trained", ("logreg_grads",),
          "logreg_grads at the point train_logreg returns (leaves that require grad, with a "
          ".grad), leaving those tensors as they were.",
          logreg_regimes.check_logreg_grads_trained),
    Check(ASSIGNMENT, microbatch.QUESTION, "weighted_sizes", ("accumulated_grad",),
          "accumulated_grad with unequal micro-batch sizes equals the full-batch mean gradient.",
          partial(microbatch.check_accumulated_grad, stale=False)),
    Check(ASSIGNMENT, microbatch.QUESTION, "stale_grad_cleared", ("accumulated_grad",),
          "accumulated_grad when w arrives with a stale .grad from earlier work.",
          partial(microbatch.check_accumulated_grad, stale=True)),
    Check(ASSIGNMENT, microbatch.QUESTION, "same_objects_twice", ("accumulated_grad",),
          "accumulated_grad twice on the same w, X, y and sizes list: the right answer both "
          "times, and everything but w.grad left as it was (values, hooks, the list).",
          microbatch.check_same_objects),
    Check(ASSIGNMENT, gradcheck.QUESTION, "forward", ("my_op", "MyOp"),
          "my_op and MyOp.apply on fresh float64 inputs, against the formula in float64.",
          gradcheck.check_forward),
    Check(ASSIGNMENT, gradcheck.QUESTION, "backward", ("MyOp",),
          "MyOp's backward with non-unit upstream gradients, against the analytic gradient.",
          gradcheck.check_backward),
    Check(ASSIGNMENT, gradcheck.QUESTION, "gradcheck", ("MyOp",),
          "torch.autograd.gradcheck of MyOp.apply on fresh float64 inputs away from 0.",
          gradcheck.check_gradcheck),
    Check(ASSIGNMENT, gradcheck.QUESTION, "two_graphs", ("MyOp",),
          "MyOp.apply on two inputs before either backward: each graph's backward uses its own "
          "input (kept on ctx, not on the class or in a global).",
          gradcheck.check_two_graphs),
    Check(ASSIGNMENT, gradcheck.QUESTION, "check_my_op", ("check_my_op",),
          "check_my_op returns True for a correct op and False for one with a wrong backward, "
          "leaving the caller's x as it was (a float64 copy is checked).",
          selfcheck.check_check_my_op),
    Check(ASSIGNMENT, gradcheck.QUESTION, "check_my_op_at_x", ("check_my_op",),
          "check_my_op about ops wrong only for negative entries, only where a gradient "
          "component is 0, or by 1e-6: gradcheck's verdict at the x given (eps=1e-6, atol=1e-8).",
          selfcheck.check_check_my_op_at_x),
    Check(ASSIGNMENT, device.QUESTION, "pick_device", ("pick_device",),
          "pick_device with cuda and mps availability simulated in every combination.",
          device.check_pick_device),
    Check(ASSIGNMENT, device.QUESTION, "predict_values", ("predict",),
          "predict with a dropout model on the grading machine's device, against a CPU "
          "reference in eval mode.",
          partial(device_predict.check_predict, moved=False)),
    Check(ASSIGNMENT, device.QUESTION, "predict_after_move", ("predict",),
          "predict across a real device change (CPU to CUDA, or to meta without a GPU).",
          partial(device_predict.check_predict, moved=True)),
    Check(ASSIGNMENT, device.QUESTION, "predict_no_graph", ("predict",),
          "predict with a model whose output shifts while autograd records through it: the "
          "forward must run without recording (no_grad or inference_mode).",
          recording.check_predict_no_graph),
    Check(ASSIGNMENT, device.QUESTION, "make_optimizer", ("make_optimizer",),
          "make_optimizer on the grading machine's device: SGD, the lr asked for, the model's "
          "own parameters.",
          partial(device.check_make_optimizer, moved=False)),
    Check(ASSIGNMENT, device.QUESTION, "make_optimizer_after_move", ("make_optimizer",),
          "make_optimizer across a device change where moving makes new parameter objects.",
          partial(device.check_make_optimizer, moved=True)),
])
