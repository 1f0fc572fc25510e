"""q1_logreg: numerically unstable forms of the logistic loss, named by what the evidence shows.

The contract's loss, ``F.binary_cross_entropy_with_logits``, is exact for any logit. Forms
that are the same formula on paper turn inf or NaN once the logits grow, in float32:

- exp-based ones (``log1p(exp(z)) - y·z``, ``log(1 + exp(z)) - y·z``, ``log1p(exp(-z)) +
  (1 - y)·z``): ``exp`` overflows once a logit passes about 88.7, the loss is inf, then the
  gradients NaN (``exp-overflow``);
- a sigmoid then log (``log(sigmoid(z))``, ``log(1 - sigmoid(z))``, a sigmoid by hand):
  ``sigmoid`` rounds to 1 from a logit of about 17 (to 0 far below), and ``log`` of 0 is -inf,
  times a label of 0 NaN (``sigmoid-log``);
- forms that give the same evidence as both (an exp-based softplus per label,
  ``y·log1p(exp(-z)) + (1 - y)·log1p(exp(z))``, NaN from ``0·inf``): the class,
  ``unstable-logistic-loss``, told what is unstable either way.

Each form is replayed in float32 on the student's data; the forms whose losses match the
student's (finite values within tolerance, inf and NaN at the same steps) are the evidence,
and a family is named only when every matching form is one of its own. ``regimes`` asks again
with logits of about 40 (past where a sigmoid rounds, short of where exp overflows) when the
first run cannot tell the families apart.
"""

from __future__ import annotations

from typing import Callable

import torch

from .common import allclose
from .logreg_advice import MISTAKES

CLASS = "unstable-logistic-loss"
#: Where float32 ``exp`` overflows, and where ``sigmoid`` rounds to 1 (``1 - sigmoid`` to 0)
EXP_OVERFLOW, SIGMOID_ROUNDS = 88.7, 16.6
#: The logit the second run's first step reaches at most: between the two
PROBE_REACH = 40.0

EXP, SIGMOID, BOTH = "exp-overflow", "sigmoid-log", CLASS


def _sigmoid_log(z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    p = torch.sigmoid(z)
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p))


def _sigmoid_by_hand(z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    p = 1 / (1 + torch.exp(-z))
    return -(y * torch.log(p) + (1 - y) * torch.log(1 - p))


#: The forms replayed: their loss per example, and the family each belongs to
FORMS: dict[str, tuple[Callable[[torch.Tensor, torch.Tensor], torch.Tensor], str]] = {
    "log1p-exp": (lambda z, y: torch.log1p(torch.exp(z)) - y * z, EXP),
    "log-one-plus-exp": (lambda z, y: torch.log(1 + torch.exp(z)) - y * z, EXP),
    "log1p-exp-of-minus-z": (lambda z, y: torch.log1p(torch.exp(-z)) + (1 - y) * z, EXP),
    "two-branch-exp": (lambda z, y: y * torch.log1p(torch.exp(-z))
                       + (1 - y) * torch.log1p(torch.exp(z)), EXP),
    "sigmoid-log": (_sigmoid_log, SIGMOID),
    "sigmoid-by-hand": (_sigmoid_by_hand, SIGMOID),
    "log-sigmoid": (lambda z, y: -(y * torch.log(torch.sigmoid(z))
                                   + (1 - y) * torch.log(torch.sigmoid(-z))), SIGMOID),
}

ADVICE = {
    EXP: ("The losses match a loss written with exp(z) (log1p(exp(z)) - y·z, log(1 + exp(z)), "
          "a softplus by hand): exp overflows float32 once a logit passes about 88.7, so with "
          "large logits the loss is inf and the gradients NaN (w and b become NaN). Use "
          "F.binary_cross_entropy_with_logits on the raw logits (or F.softplus(z) - y·z), "
          "exact for any logit."),
    SIGMOID: MISTAKES["sigmoid-log"],
    BOTH: ("The loss is computed in a numerically unstable form: with large logits exp(z) "
           "overflows float32 (past about 88.7: log1p(exp(z)), log(1 + exp(z)), a softplus by "
           "hand), or sigmoid(z) rounds to 0 or 1 and its log is -inf (a sigmoid then log), "
           "and the loss turns inf or NaN, then w and b. Use "
           "F.binary_cross_entropy_with_logits on the raw logits (or F.softplus, "
           "torch.logaddexp), exact for any logit."),
}


def replay(form: str, X: torch.Tensor, y: torch.Tensor, lr: float, steps: int) -> list[float]:
    """The contract's loop in float32 with ``form``'s loss."""
    return replay_loss(FORMS[form][0], X, y, lr, steps)


def replay_loss(loss_of: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], X: torch.Tensor,
                y: torch.Tensor, lr: float, steps: int) -> list[float]:
    """The contract's loop in float32 with ``loss_of``'s per-row loss of ``(z, y)``."""
    X, y = X.float(), y.float()
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = loss_of(X @ w + b, y).mean()
        w.grad, b.grad = None, None
        loss.backward()
        losses.append(loss.item())
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
    return losses


def _same(got: torch.Tensor, replayed: torch.Tensor, rtol: float, atol: float) -> bool:
    """Finite values within tolerance, inf (of one sign) and NaN at the same steps."""
    if got.shape != replayed.shape:
        return False
    finite = torch.isfinite(got)
    if not torch.equal(finite, torch.isfinite(replayed)):
        return False
    if not torch.equal(torch.isnan(got), torch.isnan(replayed)) or \
            not torch.equal(got[torch.isinf(got)], replayed[torch.isinf(replayed)]):
        return False
    return allclose(got[finite], replayed[finite], rtol, atol)


def matching_forms(losses: torch.Tensor, X: torch.Tensor, y: torch.Tensor, lr: float,
                   rtol: float, atol: float) -> set[str]:
    """The forms whose replay gives ``losses`` (up to one step past the first non-finite one:
    after it w and b are NaN)."""
    bad = (~torch.isfinite(losses)).nonzero()
    count = len(losses) if len(bad) == 0 else min(len(losses), int(bad[0]) + 2)
    target = losses[:count]
    return {form for form in FORMS
            if _same(target, torch.tensor(replay(form, X, y, lr, count), dtype=torch.float64),
                     rtol, atol)}


def family(forms: set[str]) -> str | None:
    """The one family every form belongs to, the class where they span both, None for none."""
    families = {FORMS[form][1] for form in forms}
    if not families:
        return None
    return families.pop() if len(families) == 1 else BOTH


def unstable_loss(losses: torch.Tensor, correct: torch.Tensor, X: torch.Tensor,
                  y: torch.Tensor, lr: float, steps: int, largest_logit: Callable[[int], float],
                  rtol: float, atol: float) -> tuple[str, str] | None:
    """Losses that turn inf or NaN where the grader's stay finite, after matching them: named
    by the forms that reproduce them, or the class when none does but the grader's logits at
    that step are past where a sigmoid rounds (``largest_logit(k)``: the largest |logit| of the
    grader's run before update ``k``). None when the evidence shows neither."""
    bad = (~torch.isfinite(losses)).nonzero()
    if len(bad) == 0 or len(losses) > len(correct):
        return None
    first = int(bad[0])
    if not torch.isfinite(correct[:first + 1]).all() \
            or not allclose(losses[:first], correct[:first], rtol, atol):
        return None
    name = family(matching_forms(losses, X, y, lr, rtol, atol))
    if name is None and largest_logit(first) > SIGMOID_ROUNDS:
        name = BOTH
    if name is None:
        return None
    return name, ADVICE[name]


def probe_lr(first_logits: torch.Tensor) -> float | None:
    """An lr whose first step takes the largest |logit| to ``PROBE_REACH``."""
    reach = float(first_logits.abs().max())
    return PROBE_REACH / reach if reach > 0 else None
