"""Red team rt-8's findings on the porting assignment, each named or scored as it should be."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import notebooks
from autograder.checks import find
from autograder.checks.porting import device, gradcheck, selfcheck
from autograder.checks.seeding import generator

ASSIGNMENT = "autograd-porting"


def _off_by_one():
    if torch.cuda.is_available():
        return torch.device(f"cuda:{torch.cuda.device_count()}")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def test_is_a_device_index_past_the_first_named_and_shown():
    """``cuda:{device_count()}``: the right kind under every availability, a device that does
    not exist. The message said the four answers were cuda, cuda, mps, cpu: right-looking."""
    result = device.check_pick_device(_off_by_one, np.random.default_rng(0))
    assert not result.passed and result.misconception == "device-index", result.message
    assert "cuda on, mps on: cuda:1" in result.message
    assert "device indices count from 0" in result.message


def test_is_cuda_zero_still_right():
    def zero():
        return torch.device("cuda:0" if torch.cuda.is_available() else
                            "mps" if torch.backends.mps.is_available() else "cpu")

    assert device.check_pick_device(zero, np.random.default_rng(0)).passed


FORMULA = '''
def check_my_op(x):
    """No gradcheck: autograd's gradient of my_op against the hand formula (rt-8, rt-5 p7)."""
    x64 = x.detach().to(torch.float64).clone().requires_grad_(True)
    (got,) = torch.autograd.grad(my_op(x64), x64)
    with torch.no_grad():
        A, S = x64.abs().sum(), (x64 ** 3).sum()
        want = 3 * x64 ** 2 / (1 + A) - S * torch.sign(x64) / (1 + A) ** 2
    return bool(torch.allclose(got, want, rtol=1e-3, atol=1e-8))
'''


RATIO_FORMULA = '''
def check_my_op(x):
    """rt-9: the formula times my_op(x) / f(x), which the scaled op alone passes."""
    x64 = x.detach().to(torch.float64).clone().requires_grad_(True)
    out = my_op(x64)
    (g,) = torch.autograd.grad(out, x64)
    with torch.no_grad():
        xd = x64.detach()
        S, A = (xd ** 3).sum(), xd.abs().sum()
        k = out.detach() / (S / (1 + A))
        expected = k * (3 * xd ** 2 / (1 + A) - S * torch.sign(xd) / (1 + A) ** 2)
        return bool(((g - expected).abs() <= 1e-8 + 1e-3 * expected.abs()).all())
'''


@pytest.mark.parametrize("source", [FORMULA, RATIO_FORMULA])
@pytest.mark.parametrize("seed", range(4))
def test_is_a_formula_compared_in_place_of_gradcheck_named(seed, source):
    env = notebooks.namespace(notebooks.solution_with(ASSIGNMENT, "check_my_op", source))
    result = selfcheck.check_check_my_op(env["check_my_op"], generator(seed))
    assert not result.passed and result.misconception == "compares-with-formula", result.message
    assert "times the lesson's op plus" in result.message


@pytest.mark.parametrize("seed", range(4))
def test_does_the_solutions_check_keep_its_point_on_the_scaled_op(seed):
    env = notebooks.namespace(notebooks.solution(ASSIGNMENT))
    assert selfcheck.check_check_my_op(env["check_my_op"], generator(seed)).passed


@pytest.mark.slow
def test_does_the_sealed_judge_name_the_formula_too(zips, tmp_path):
    nb = notebooks.solution_with(ASSIGNMENT, "check_my_op", FORMULA)
    doc = notebooks.judged_sealed(nb, tmp_path / "formula.ipynb", ASSIGNMENT, zips[ASSIGNMENT])
    assert notebooks.failed_checks(doc, "q3_gradcheck") == {
        ("check_my_op", "compares-with-formula")}
    assert not notebooks.lost_elsewhere(doc, "q3_gradcheck")


def _op(gradient: str) -> str:
    """A MyOp whose backward computes ``grad`` from x, S, A as ``gradient`` says."""
    return f'''
class MyOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x ** 3).sum() / (1 + x.abs().sum())

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        S, A = (x ** 3).sum(), x.abs().sum()
{gradient}
        return grad_output * grad


def my_op(x):
    return MyOp.apply(x)
'''


#: rt-8's and rt-9's backwards, right at every input the first rounds drew: (the backward's
#: lines, what it is named)
WRONG_BACKWARDS = {
    "clamped at 0.05": ('''
        grad = 3 * x ** 2 / (1 + A) - S * (x / x.abs().clamp(min=0.05)) / (1 + A) ** 2''',
                        "near-zero-entries"),
    "clamped at 1e-3 (rt-9)": ('''
        grad = 3 * x ** 2 / (1 + A) - S * (x / x.abs().clamp(min=1e-3)) / (1 + A) ** 2''',
                               "near-zero-entries"),
    "an eps of 1e-12 added to |x|": ('''
        grad = 3 * x ** 2 / (1 + A) - S * (x / (x.abs() + 1e-12)) / (1 + A) ** 2''',
                                     "near-zero-entries"),
    "a term for float64 only": ('''
        grad = 3 * x ** 2 / (1 + A)
        if x.dtype == torch.float64:
            grad = grad - S * torch.sign(x) / (1 + A) ** 2''', "dtype-dependent"),
    "sums per matrix": ('''
        if x.dim() > 2:
            S = (x ** 3).sum(dim=(-2, -1), keepdim=True)
            A = x.abs().sum(dim=(-2, -1), keepdim=True)
        grad = 3 * x ** 2 / (1 + A) - S * torch.sign(x) / (1 + A) ** 2''', "sums-per-slice"),
}


@pytest.mark.parametrize("case", sorted(WRONG_BACKWARDS))
@pytest.mark.parametrize("seed", range(3))
def test_is_a_backward_right_only_where_the_first_rounds_look_named(case, seed):
    gradient, name = WRONG_BACKWARDS[case]
    op = notebooks.defined("import torch\n" + _op(gradient), "MyOp")
    result = gradcheck.check_backward(op, generator(seed))
    assert not result.passed and result.misconception == name, result.message


@pytest.mark.parametrize("seed", range(6))
def test_does_the_solutions_op_pass_every_added_input(seed):
    env = notebooks.namespace(notebooks.solution(ASSIGNMENT))
    assert gradcheck.check_backward(env["MyOp"], generator(seed)).passed
    assert gradcheck.check_forward(env["my_op"], env["MyOp"], generator(seed)).passed


def test_is_a_forward_summing_per_matrix_named():
    source = "import torch\n" + _op("        grad = 3 * x ** 2 / (1 + A) - S * torch.sign(x) "
                                    "/ (1 + A) ** 2").replace(
        "return (x ** 3).sum() / (1 + x.abs().sum())",
        "dims = tuple(range(x.dim()))[-2:] if x.dim() > 2 else None\n"
        "        if dims is None:\n"
        "            return (x ** 3).sum() / (1 + x.abs().sum())\n"
        "        return ((x ** 3).sum(dims) / (1 + x.abs().sum(dims))).sum()")
    op = notebooks.defined(source, "MyOp")
    result = gradcheck.check_forward(op.apply, op, generator(1))
    assert not result.passed and result.misconception == "sums-per-slice", result.message


@pytest.mark.slow
def test_does_the_sealed_judge_name_the_dead_zone(zips, tmp_path):
    nb = notebooks.solution_with(ASSIGNMENT, "my_op", _op(WRONG_BACKWARDS["clamped at 0.05"][0]))
    doc = notebooks.judged_sealed(nb, tmp_path / "zone.ipynb", ASSIGNMENT, zips[ASSIGNMENT])
    failed = notebooks.failed_checks(doc, "q3_gradcheck")
    assert ("backward", "near-zero-entries") in failed, failed
    assert not notebooks.lost_elsewhere(doc, "q3_gradcheck")


STEP_PRE_HOOK = '''
def make_optimizer(model, device, lr=0.1):
    model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=lr)

    def _flip(optimizer, args, kwargs):
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.neg_()

    opt.register_step_pre_hook(_flip)
    return opt
'''
STEP_REPLACED = '''
def make_optimizer(model, device, lr=0.1):
    model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    plain = opt.step
    opt.step = lambda closure=None: [plain(closure) for _ in range(3)][-1]
    return opt
'''
GRAD_HOOKS = '''
def make_optimizer(model, device, lr=0.1):
    model.to(device)
    for p in model.parameters():
        if p.requires_grad:
            p.register_hook(lambda g: torch.zeros_like(g))
    return torch.optim.SGD(model.parameters(), lr=lr)
'''
FORWARD_HOOK = '''
def predict(model, batch, device):
    model.to(device)
    model.eval()
    batch = batch.to(device)
    with torch.no_grad():
        out = model(batch)
    if not getattr(model, "_hooked", False):
        model.register_forward_hook(lambda m, inp, o: o * 2)
        model._hooked = True
    return out
'''
#: (source, the function's name, its checks, what each failing check is named)
LEFT_BEHIND = {
    "step-pre-hook": (STEP_PRE_HOOK, "make_optimizer", "step-changed"),
    "step-replaced": (STEP_REPLACED, "make_optimizer", "step-changed"),
    "grad-hooks": (GRAD_HOOKS, "make_optimizer", "modified-input"),
    "forward-hook": (FORWARD_HOOK, "predict", "modified-input"),
}
CHECKS_OF = {"make_optimizer": ("q4_device/make_optimizer", "q4_device/make_optimizer_after_move"),
             "predict": ("q4_device/predict_values", "q4_device/predict_after_move")}


@pytest.mark.parametrize("case", sorted(LEFT_BEHIND))
def test_is_code_left_registered_by_the_device_functions_named(case):
    source, name, named = LEFT_BEHIND[case]
    env = notebooks.namespace(notebooks.solution_with(ASSIGNMENT, name, source))
    for key in CHECKS_OF[name]:
        result = find(ASSIGNMENT, key)({name: env[name]}, generator(2))
        assert not result.passed and result.misconception == named, (key, result.message)


@pytest.mark.slow
def test_does_the_sealed_judge_see_what_was_left_registered(zips, tmp_path):
    """Both make_optimizer cases and predict's hook, through the worker: the judge mirrors
    the hooks and the replaced step the worker reports."""
    for case in ("step-pre-hook", "step-replaced", "grad-hooks", "forward-hook"):
        source, name, named = LEFT_BEHIND[case]
        nb = notebooks.solution_with(ASSIGNMENT, name, source)
        doc = notebooks.judged_sealed(nb, tmp_path / f"{case}.ipynb", ASSIGNMENT,
                                      zips[ASSIGNMENT])
        failed = notebooks.failed_checks(doc, "q4_device")
        assert {check for check, _ in failed} == {k.split("/")[1] for k in CHECKS_OF[name]}, \
            (case, failed)
        assert {why for _, why in failed} == {named}, (case, failed)
        assert not notebooks.lost_elsewhere(doc, "q4_device"), case


SWAP_FLAG = "\ntorch.__future__.set_swap_module_params_on_conversion(True)\n"


@pytest.mark.slow
def test_is_a_model_moved_with_torchs_swap_flag_on_seen_on_its_device(zips, tmp_path):
    """With ``set_swap_module_params_on_conversion(True)`` (a notebook cell), ``model.to``
    keeps each parameter object and swaps its contents: the judge mirrored the move through
    ``.data``, which does not cross to meta, and read a correct predict and make_optimizer as
    never moved (red team rt-8)."""
    nb = notebooks.solution_with(ASSIGNMENT, "predict", SWAP_FLAG)
    doc = notebooks.judged_sealed(nb, tmp_path / "swap.ipynb", ASSIGNMENT, zips[ASSIGNMENT])
    q4 = doc.questions["q4_device"]
    assert q4.points == q4.possible, notebooks.failed_checks(doc, "q4_device")


ALWAYS_TRUE = '''
def check_my_op(x):
    return True
'''


@pytest.mark.parametrize("seed", range(3))
def test_is_a_constant_true_told_as_such_not_as_an_input_class(seed):
    """rt-8's snoop fell back on True: the probes said "wrong for negative inputs"."""
    env = notebooks.namespace(notebooks.solution_with(ASSIGNMENT, "check_my_op", ALWAYS_TRUE))
    result = find(ASSIGNMENT, "q3_gradcheck/check_my_op_at_x")(
        {"check_my_op": env["check_my_op"]}, generator(seed))
    assert not result.passed and result.misconception == "accepts-broken-op", result.message
    assert "does not come from checking the op" in result.message


#: Red team rt-9: hooks torch runs for every module or optimizer in the process. A cell's makes
#: the recording test model show nothing (a graph recorded in predict goes unseen); predict's
#: and make_optimizer's stay after they return. (function replaced, its source, the checks of
#: it that lose their point)
RECORDED = '''
def predict(model, batch, device):
    model.to(device)
    batch = batch.to(device)
    model.eval()
    return model(batch).detach()
'''
GLOBAL_HOOKS = {
    "a cell's global forward hook": ("predict", RECORDED + '''

def _identity_for_marks(module, args, output):
    if type(module).__name__ == "RecordingMark":
        return args[0]
    return None


_hook_handle = torch.nn.modules.module.register_module_forward_hook(_identity_for_marks)
''', {"predict_no_graph"}),
    "predict's global pre-hook": ("predict", '''
_PRE = []


def _force_eval(module, args):
    module.training = False


def predict(model, batch, device):
    model.to(device)
    batch = batch.to(device)
    if not _PRE:
        _PRE.append(torch.nn.modules.module.register_module_forward_pre_hook(_force_eval))
    with torch.no_grad():
        return model(batch)
''', {"predict_values", "predict_after_move", "predict_no_graph"}),
    "make_optimizer's global step post-hook": ("make_optimizer", '''
from torch.optim.optimizer import register_optimizer_step_post_hook

_POST = []


def _shrink_after_step(optimizer, args, kwargs):
    with torch.no_grad():
        for group in optimizer.param_groups:
            for p in group["params"]:
                p.mul_(0.99)


def make_optimizer(model, device, lr=0.1):
    if not _POST:
        _POST.append(register_optimizer_step_post_hook(_shrink_after_step))
    model.to(device)
    return torch.optim.SGD(model.parameters(), lr=lr)
''', {"make_optimizer"}),
}


@pytest.mark.parametrize("case", sorted(GLOBAL_HOOKS))
def test_are_global_hooks_neither_felt_nor_left(case, tmp_path):
    name, source, _ = GLOBAL_HOOKS[case]
    env = notebooks.namespace(notebooks.solution_with(ASSIGNMENT, name, source))
    try:
        results = [find(ASSIGNMENT, f"q4_device/{c}")({name: env[name]}, generator(3))
                   for c in GLOBAL_HOOKS[case][2]]
        failed = {r.check for r in results if not r.passed}
        assert all(r.misconception != "raised" for r in results), results
    finally:  # the hooks the notebook registered in this process, for every later test
        for handle in [env.get("_hook_handle"), *env.get("_PRE", []), *env.get("_POST", [])]:
            if handle is not None:
                handle.remove()
    from torch.nn.modules import module as hooks_of_modules
    from torch.optim import optimizer as hooks_of_optimizers
    assert not hooks_of_modules._global_forward_hooks and \
        not hooks_of_modules._global_forward_pre_hooks and \
        not hooks_of_optimizers._global_optimizer_post_hooks
    assert failed, case


@pytest.mark.slow
def test_does_the_sealed_judge_score_global_hooks(zips, tmp_path):
    for case, (name, source, losing) in sorted(GLOBAL_HOOKS.items()):
        nb = notebooks.solution_with(ASSIGNMENT, name, source)
        doc = notebooks.judged_sealed(nb, tmp_path / "hooked.ipynb", ASSIGNMENT,
                                      zips[ASSIGNMENT])
        failed = notebooks.failed_checks(doc, "q4_device")
        assert {check for check, _ in failed} & losing, (case, failed)
        assert not notebooks.lost_elsewhere(doc, "q4_device"), (case, failed)


CACHED_BY_W_VALUES = '''
_CACHE = {}


def accumulated_grad(w, X, y, sizes):
    key = (tuple(X.shape), X.dtype, tuple(sizes), w.detach().cpu().numpy().tobytes())
    if key in _CACHE:
        w.grad = _CACHE[key].clone()
        return _CACHE[key].clone()
    w.grad = None
    B, start = sum(sizes), 0
    for bj in sizes:
        Xj, yj = X[start:start + bj], y[start:start + bj]
        (F.binary_cross_entropy_with_logits(Xj @ w, yj) * (bj / B)).backward()
        start += bj
    _CACHE[key] = w.grad.detach().clone()
    return w.grad.clone()
'''


@pytest.mark.parametrize("seed", range(4))
def test_is_an_answer_kept_for_the_same_w_and_batch_shape_named(seed):
    """rt-9: the next batch of the same shape at the same w got the previous batch's answer."""
    env = notebooks.namespace(notebooks.solution_with(ASSIGNMENT, "accumulated_grad",
                                                      CACHED_BY_W_VALUES))
    result = find(ASSIGNMENT, "q2_microbatch/same_objects_twice")(
        {"accumulated_grad": env["accumulated_grad"]}, generator(seed))
    assert not result.passed and result.misconception == "answer-cached", result.message
    assert "the next batch" in result.message


@pytest.mark.parametrize("seed", range(4))
def test_does_the_solution_keep_its_point_on_the_next_batch(seed):
    env = notebooks.namespace(notebooks.solution(ASSIGNMENT))
    assert find(ASSIGNMENT, "q2_microbatch/same_objects_twice")(
        {"accumulated_grad": env["accumulated_grad"]}, generator(seed)).passed


SWAP_LEFT_ON = '''
def make_optimizer(model, device, lr=0.1):
    torch.__future__.set_swap_module_params_on_conversion(True)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    model.to(device)
    return opt
'''


def test_is_a_module_conversion_flag_left_changed_scored():
    """rt-9: make_optimizer turned torch's swap flag on and left it (then building the SGD
    before the move is right: the move keeps the parameter objects)."""
    from autograder.harness import run_check

    env = notebooks.namespace(notebooks.solution_with(ASSIGNMENT, "make_optimizer",
                                                      SWAP_LEFT_ON))
    try:
        result = run_check({"make_optimizer": env["make_optimizer"]}, ASSIGNMENT,
                           "q4_device/make_optimizer", 3)
    finally:
        torch.__future__.set_swap_module_params_on_conversion(False)
    assert not result.passed and result.misconception == "global-mode-left", result.message
    assert "set_swap_module_params_on_conversion set to True" in result.message


@pytest.mark.parametrize("atol, rtol", [(5e-7, 4e-3), (1e-8, 2e-3), (1e-7, 1e-3),
                                        (1e-8, 1.4e-3)])
def test_is_a_tolerance_a_few_times_the_contracts_named(atol, rtol):
    """rt-9: gradcheck with atol=5e-7 and rtol=4e-3 gave the right verdict on the 1.005 and
    1e-6 cases; the backward times 1.0011 and plus 3e-8 sit just over the contract's (rt-10:
    rtol=1.4e-3 passed under the 1.0015 this was)."""
    source = f'''
def check_my_op(x):
    x64 = x.detach().to(torch.float64).clone().requires_grad_(True)
    return torch.autograd.gradcheck(my_op, (x64,), eps=1e-6, atol={atol}, rtol={rtol},
                                    raise_exception=False)
'''
    env = notebooks.namespace(notebooks.solution_with(ASSIGNMENT, "check_my_op", source))
    result = find(ASSIGNMENT, "q3_gradcheck/check_my_op_at_x")(
        {"check_my_op": env["check_my_op"]}, generator(1))
    assert not result.passed and result.misconception == "tolerance-loosened", result.message
