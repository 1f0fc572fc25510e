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
    logreg_grads_trained,
    logreg_regimes,
    microbatch,
    recording,
    selfcheck,
    selfcheck_at_x,
)

ASSIGNMENT = "autograd-porting"

CHECKS = index([
    Check(ASSIGNMENT, logreg.QUESTION, "train_logreg_losses", ("train_logreg",),
          partial(logreg.check_train_logreg, part="losses")),
    Check(ASSIGNMENT, logreg.QUESTION, "train_logreg_params", ("train_logreg",),
          partial(logreg.check_train_logreg, part="params")),
    Check(ASSIGNMENT, logreg.QUESTION, "logreg_grads", ("logreg_grads",),
          logreg_grads.check_logreg_grads),
    Check(ASSIGNMENT, logreg.QUESTION, "train_logreg_regimes", ("train_logreg",),
          logreg_regimes.check_train_logreg_regimes),
    Check(ASSIGNMENT, logreg.QUESTION, "logreg_grads_trained", ("logreg_grads",),
          logreg_grads_trained.check_logreg_grads_trained),
    Check(ASSIGNMENT, microbatch.QUESTION, "weighted_sizes", ("accumulated_grad",),
          partial(microbatch.check_accumulated_grad, stale=False)),
    Check(ASSIGNMENT, microbatch.QUESTION, "stale_grad_cleared", ("accumulated_grad",),
          partial(microbatch.check_accumulated_grad, stale=True)),
    Check(ASSIGNMENT, microbatch.QUESTION, "same_objects_twice", ("accumulated_grad",),
          microbatch.check_same_objects),
    Check(ASSIGNMENT, gradcheck.QUESTION, "forward", ("my_op", "MyOp"),
          gradcheck.check_forward),
    Check(ASSIGNMENT, gradcheck.QUESTION, "backward", ("MyOp",),
          gradcheck.check_backward),
    Check(ASSIGNMENT, gradcheck.QUESTION, "gradcheck", ("MyOp",),
          gradcheck.check_gradcheck),
    Check(ASSIGNMENT, gradcheck.QUESTION, "two_graphs", ("MyOp",),
          gradcheck.check_two_graphs),
    Check(ASSIGNMENT, gradcheck.QUESTION, "check_my_op", ("check_my_op",),
          selfcheck.check_check_my_op),
    Check(ASSIGNMENT, gradcheck.QUESTION, "check_my_op_at_x", ("check_my_op",),
          selfcheck_at_x.check_check_my_op_at_x),
    Check(ASSIGNMENT, device.QUESTION, "pick_device", ("pick_device",),
          device.check_pick_device),
    Check(ASSIGNMENT, device.QUESTION, "predict_values", ("predict",),
          partial(device_predict.check_predict, moved=False)),
    Check(ASSIGNMENT, device.QUESTION, "predict_after_move", ("predict",),
          partial(device_predict.check_predict, moved=True)),
    Check(ASSIGNMENT, device.QUESTION, "predict_no_graph", ("predict",),
          recording.check_predict_no_graph),
    Check(ASSIGNMENT, device.QUESTION, "make_optimizer", ("make_optimizer",),
          partial(device.check_make_optimizer, moved=False)),
    Check(ASSIGNMENT, device.QUESTION, "make_optimizer_after_move", ("make_optimizer",),
          partial(device.check_make_optimizer, moved=True)),
])
