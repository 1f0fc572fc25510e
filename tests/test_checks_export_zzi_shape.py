"""q5 ``export_numpy`` in blind round zzi: t's values handed back in another shape.

Student 02 squeezed a leading dimension of size 1 (``src.squeeze(0)``, "a batch of one example:
export the example itself"): told only "returned shape (5,); expected (1, 5)", and charged a
second time by the independence check as ``wrong-type`` ("expected a numpy.ndarray of t's
shape") though the array was an ndarray, and independent. Now:

- the values check names the reshaping that gives the answer when exactly one does:
  ``shape-squeezed``, ``shape-flattened``, ``shape-transposed`` (a square t too, whose shape
  comes out right), ``dimension-added``; a squeeze and a flatten, alike on a tensor with one
  dimension over 1, are told apart by one more call;
- the independence check judges independence on such an array (a copy passes, a view of t's
  memory is ``shares-storage``), in the checks' process and through the worker alike; an array
  that holds none of t's values fails as ``wrong-shape``, a non-array as ``wrong-type``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.checks.exercises import export
from autograder.checks.seeding import generator
from test_observations import Loopback

SEEDS = range(4)


def confirm(*args):
    from autograder.checks.exercises.export_shape import confirm as confirmed  # new here

    return confirmed(*args)


def _copy(t):
    return t.detach().cpu().numpy().copy()


def _zzi(t):
    """Blind round zzi, student 02."""
    src = t.detach().cpu()
    if src.dim() > 1 and src.shape[0] == 1:
        src = src.squeeze(0)  # a batch of one example: export the example itself
    return src.numpy().copy()


RESHAPED = {
    "shape-squeezed": {
        "squeeze(0) when the first dimension is 1": _zzi,
        "t[0] for a batch of one": lambda t: _copy(t)[0] if t.dim() > 1 and t.shape[0] == 1
        else _copy(t),
        "squeeze() on 2-D": lambda t: t.detach().squeeze().numpy().copy() if t.dim() > 1
        else _copy(t),
        "np.squeeze on 2-D": lambda t: np.squeeze(_copy(t)) if t.dim() > 1 else _copy(t),
        "squeeze(-1) when the last dimension is 1": lambda t: (
            t.detach().squeeze(-1).numpy().copy() if t.dim() > 1 and t.shape[-1] == 1
            else _copy(t)),
    },
    "shape-flattened": {
        "ravel()": lambda t: _copy(t).ravel(),
        "reshape(-1)": lambda t: _copy(t).reshape(-1),
        "flatten()": lambda t: t.detach().flatten().numpy().copy(),
        "np.ravel": lambda t: np.ravel(_copy(t)),
        "view(-1) after contiguous": lambda t: t.detach().contiguous().view(-1).numpy().copy(),
    },
    "shape-transposed": {
        ".T": lambda t: _copy(t).T.copy(),
        ".mT": lambda t: t.detach().mT.numpy().copy() if t.dim() > 1 else _copy(t),
        "permute reversed": lambda t: t.detach().permute(*reversed(range(t.dim()))).numpy()
        .copy(),
        "np.transpose": lambda t: np.transpose(_copy(t)).copy(),
    },
    "dimension-added": {
        "[None]": lambda t: _copy(t)[None],
        "unsqueeze(0)": lambda t: t.detach().unsqueeze(0).numpy().copy(),
        "np.expand_dims(-1)": lambda t: np.expand_dims(_copy(t), -1),
        "np.atleast_2d": lambda t: np.atleast_2d(_copy(t)),
    },
}
CASES = [(name, how) for name, ways in RESHAPED.items() for how in ways]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name, how", CASES)
def test_a_reshaped_export_is_named_and_keeps_its_independence_points(name, how, seed):
    fn = RESHAPED[name][how]
    result = export.check_export(fn, generator(seed))
    assert not result.passed and result.misconception == name, result.message
    assert "keeps t's shape" in result.message and export.EXPORT in result.message
    independent = export.check_independent(fn, generator(seed))
    assert independent.passed, independent.message


@pytest.mark.parametrize("seed", range(12))
def test_the_blind_squeeze_is_told_what_was_dropped(seed):
    result = export.check_export(_zzi, generator(seed))
    assert result.misconception == "shape-squeezed", result.message
    for words in ("squeezed", "size-1 dimensions", "(1, n), not (n,)", "kept the shape"):
        assert words in result.message, result.message


def test_the_blind_squeeze_on_the_rounds_tensors():
    """The label's tensors: (1, 1) and (1, 3) come back (1,) and (3,)."""
    for t in (torch.tensor([[-2.5]], dtype=torch.float64), torch.tensor([[0.5, 1.5, 2.5]])):
        got = _zzi(t)
        verdict = export.judge_export(got, t)
        assert verdict.misconception == "wrong-shape", verdict.message  # both fit, unconfirmed
        assert "both t.squeeze() and t.ravel()" in verdict.message, verdict.message
        confirmed = confirm(verdict, _zzi, got, t, export.expected_array(t), "e", "x")
        assert confirmed.misconception == "shape-squeezed", confirmed.message


def test_a_flatten_that_looks_like_a_squeeze_is_confirmed_as_a_flatten():
    t = torch.tensor([[0.5, 1.5, 2.5]], requires_grad=True)
    fn = RESHAPED["shape-flattened"]["ravel()"]
    got = fn(t)
    verdict = export.judge_export(got, t)
    confirmed = confirm(verdict, fn, got, t, export.expected_array(t), "e", "x")
    assert confirmed.misconception == "shape-flattened", confirmed.message
    assert "came back flat too" in confirmed.message


def test_an_unconfirmed_squeeze_or_flatten_says_what_was_established():
    """One more call that neither keeps nor flattens the probe's shape names nothing."""
    t = torch.tensor([[0.5, 1.5, 2.5]])

    def odd(x):
        return _copy(x).reshape(-1) if x.shape[0] == 1 else _copy(x)[:1]

    got = odd(t)
    verdict = export.judge_export(got, t)
    confirmed = confirm(verdict, odd, got, t, export.expected_array(t), "e", "x")
    assert confirmed == verdict and confirmed.misconception == "wrong-shape"


def test_a_square_transpose_keeps_the_shape_and_is_named_by_its_values():
    t = torch.arange(9, dtype=torch.float64).reshape(3, 3) / 7
    verdict = export.judge_export(_copy(t).T.copy(), t)
    assert verdict.misconception == "shape-transposed", verdict.message
    assert "entry [i, j] is t[j, i]" in verdict.message


NO_COPY = {
    "shares-storage": {
        ".T without copy": lambda t: t.detach().numpy().T,
        "ravel() without copy": lambda t: t.detach().numpy().ravel(),
        "[None] without copy": lambda t: t.detach().numpy()[None],
        "squeeze(0) without copy": lambda t: (t.detach().squeeze(0).numpy()
                                              if t.dim() > 1 and t.shape[0] == 1
                                              else _copy(t)),
    },
}


def _remote(source: str):
    return Loopback("import numpy as np\n" + source).function("export_numpy")


REMOTE_NO_COPY = {
    ".T without copy": "def export_numpy(t):\n    return t.detach().numpy().T\n",
    "ravel() without copy": "def export_numpy(t):\n    return t.detach().numpy().ravel()\n",
    "[None] without copy": "def export_numpy(t):\n    return t.detach().numpy()[None]\n",
    "squeeze(0) without copy": (
        "def export_numpy(t):\n    s = t.detach()\n    if s.dim() > 1 and s.shape[0] == 1:\n"
        "        return s.squeeze(0).numpy()\n    return s.numpy().copy()\n"),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("how", sorted(NO_COPY["shares-storage"]))
def test_a_reshaped_view_of_t_is_judged_for_independence(how, seed):
    result = export.check_independent(NO_COPY["shares-storage"][how], generator(seed))
    assert result.misconception == "shares-storage", result.message


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("how", sorted(REMOTE_NO_COPY))
def test_the_worker_gives_the_same_verdicts(how, seed):
    """Through the worker the answer arrives as data: the judge makes it a view of its own t
    again (squeezed, flattened, transposed), so both runners see the shared memory."""
    local = export.check_independent(NO_COPY["shares-storage"][how], generator(seed))
    remote = export.check_independent(_remote(REMOTE_NO_COPY[how]), generator(seed))
    assert remote.misconception == local.misconception == "shares-storage", remote.message
    assert remote.message == local.message
    values = (export.check_export(NO_COPY["shares-storage"][how], generator(seed)),
              export.check_export(_remote(REMOTE_NO_COPY[how]), generator(seed)))
    assert values[0].misconception == values[1].misconception != "shares-storage"


def test_the_worker_keeps_a_copy_a_copy():
    for source in ("def export_numpy(t):\n    return t.detach().numpy().copy().T\n",
                   "def export_numpy(t):\n    return t.detach().numpy()[::-1].copy()\n"):
        assert export.check_independent(_remote(source), generator(0)).passed


def test_the_worker_does_not_pass_a_reversed_view_as_t():
    """A view of t's memory in an order the judge does not rebuild (reversed rows) stays the
    values the worker sent: its values check fails as it does here."""
    source = "def export_numpy(t):\n    return t.detach().numpy()[::-1]\n"
    here = export.check_export(lambda t: t.detach().numpy()[::-1], generator(0))
    there = export.check_export(_remote(source), generator(0))
    assert not there.passed and there.misconception == here.misconception, there.message


def test_an_array_without_t_values_fails_independence_as_wrong_shape():
    for fn in (lambda t: np.zeros(3), lambda t: _copy(t)[:1].copy()):
        result = export.check_independent(fn, generator(0))
        assert result.misconception == "wrong-shape", result.message
        assert "does not hold t's values" in result.message
        assert "expected a numpy.ndarray" not in result.message


@pytest.mark.parametrize("got", [None, [1.0, 2.0], "text"])
def test_a_non_array_is_still_told_its_type(got):
    result = export.check_independent(lambda t: got, generator(0))
    assert result.misconception == "wrong-type", result.message
    assert "expected a numpy.ndarray of t's shape" in result.message, result.message
    assert export.check_independent(lambda t: torch.tensor(_copy(t)),
                                    generator(0)).misconception == "wrong-type"


CORRECT = {
    "numpy().copy()": _copy,
    "np.array(t.detach().cpu())": lambda t: np.array(t.detach().cpu()),
    "np.require OWNDATA": lambda t: np.require(t.detach().cpu().numpy(),
                                               requirements=["OWNDATA", "WRITEABLE"]),
    "numpy(force=True).copy()": lambda t: t.numpy(force=True).copy(),
    "torch.Tensor.numpy(force=True).copy()": lambda t: torch.Tensor.numpy(t, force=True).copy(),
    "np.copy": lambda t: np.copy(t.detach().numpy()),
    "clone().numpy()": lambda t: t.detach().clone().numpy(),
    "np.array(tolist(), dtype)": lambda t: np.array(t.detach().tolist(),
                                                    dtype=t.detach().numpy().dtype),
    "reshape(t.shape) of a flat copy": lambda t: _copy(t).reshape(-1).reshape(tuple(t.shape)),
    ".T.copy().T": lambda t: _copy(t).T.copy().T,
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("how", sorted(CORRECT))
def test_correct_exports_keep_full_marks(how, seed):
    for check in (export.check_export, export.check_independent):
        result = check(CORRECT[how], generator(seed))
        assert result.passed, (check.__name__, result.message)


OTHER_NAMES = {
    "shares-storage": lambda t: t.detach().numpy(),
    "numpy-on-tracked": lambda t: t.numpy().copy(),
    "dtype-changed": lambda t: np.array(t.detach().tolist(), dtype=np.float32),
    "zero-dim-scalar": lambda t: _copy(t) * 1,
    "zero-dim-unhandled": lambda t: np.stack([r.detach().numpy().copy() for r in t.unbind(0)]),
    "values-through-float": lambda t: (t.detach().to(torch.float64).numpy().astype(np.int64)
                                       if t.dtype == torch.int64 else _copy(t)),
}


@pytest.mark.parametrize("name", sorted(OTHER_NAMES))
def test_other_named_mistakes_keep_their_names(name):
    results = [check(OTHER_NAMES[name], generator(s)) for s in SEEDS
               for check in (export.check_export, export.check_independent)]
    assert name in {r.misconception for r in results}, [r.message for r in results]
    assert not {r.misconception for r in results} & {
        "shape-squeezed", "shape-flattened", "shape-transposed", "dimension-added"}


@pytest.mark.parametrize("shape", [(1,), (1, 1)])
def test_one_element_and_zero_dim_keep_their_messages(shape):
    t = torch.tensor([3.5]).reshape(shape)
    verdict = export.judge_export(np.array(t.item(), dtype=np.float32), t)
    assert verdict.misconception == "wrong-shape" and ".item()" in verdict.message
    zero = torch.tensor(2.0)
    verdict = export.judge_export(np.atleast_1d(_copy(zero)), zero)
    assert verdict.misconception == "wrong-shape" and "t is 0-d" in verdict.message
