"""The names each assignment's checks read from a student's notebook, as plain text (no torch:
the reports read it without importing the checks). ``tests/test_near_names.py`` holds it equal
to the registries' ``needs``."""

from __future__ import annotations

NAMES: dict[str, tuple[str, ...]] = {
    "autograd-exercises": ("count_saved", "export_numpy", "multipath_grads", "reuse_raises",
                           "split_path_grads", "square_grads", "vjp_square"),
    "autograd-porting": ("MyOp", "accumulated_grad", "check_my_op", "logreg_grads",
                         "make_optimizer", "my_op", "pick_device", "predict", "train_logreg"),
}
