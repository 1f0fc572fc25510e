"""The grader's stand-in op, which ``arrangements`` swaps into a student's function's globals
(``swap_globals``), and the backwards the judge may choose for it.

The stand-in is one class named ``MyOp`` whose forward is the lesson's op and whose backward asks
whoever holds the choice of backward (``STAND_IN_BACKWARD``): the judge, over the worker's pipe
(``asked_backward``), or the request itself when the student's code runs in the checks' own
process. What it observes (its input dtypes, how autograd met each call: ``grad_mode``) comes
back with the call's result, heard only (``arrangements``).
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from . import wire


def _lesson_op(x: torch.Tensor) -> torch.Tensor:
    return (x ** 3).sum() / (1 + x.abs().sum())


#: The request key that holds the choice of backward (one of ``BACKWARDS``). It is the
#: judge's: ``checks.context.for_worker`` leaves it out of what travels to a worker.
STAND_IN_BACKWARD = "stand_in_backward"
#: The request key that scales the stand-in op, forward and backward, and shifts its forward
#: (``[scale, offset]``: ``fresh_stand_ins``).
STAND_IN_SCALE = "stand_in_scale"


def _sign_term(x: torch.Tensor) -> torch.Tensor:
    return (x ** 3).sum() / (1 + x.abs().sum()) ** 2


def _by_rows(x: torch.Tensor) -> torch.Tensor:
    """The gradient with S and A summed along the last dimension (keepdim) minus the right
    one's formula: exactly 0 for a 1-D (or 0-d) x, wrong for a 2-D x."""
    if x.dim() < 2:
        return torch.zeros_like(x)

    def formula(S: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
        return 3 * x ** 2 / (1 + A) - S * torch.sign(x) / (1 + A) ** 2

    return (formula((x ** 3).sum(-1, keepdim=True), x.abs().sum(-1, keepdim=True))
            - formula((x ** 3).sum(), x.abs().sum()))


#: Backwards wrong on part of the input space only, as added to the right gradient:
#: ``negative`` drops sign(x) (wrong only at negative entries), ``zero`` takes sign(0) as 1
#: (wrong only at entries equal to 0, where the gradient's component is 0), ``offset`` is off
#: by 1e-6 everywhere, which gradcheck's rtol=1e-3 hides except where a component of the
#: gradient is 0 and only its atol=1e-8 applies; ``rows`` sums S and A along the last
#: dimension, right for a 1-D x only.
_FAULTS = {
    "negative": lambda x: _sign_term(x) * (torch.sign(x) - 1),
    "zero": lambda x: -_sign_term(x) * (x == 0).to(x.dtype),
    "offset": lambda x: torch.full_like(x, 1e-6),
    "rows": _by_rows,
    # 3e-8: over the contract's atol=1e-8, under a loosened one (5e-7: red team rt-9)
    "offset_edge": lambda x: torch.full_like(x, 3e-8),
}
#: Backwards off by a relative amount everywhere, as factors of the right gradient: ``scaled``
#: (0.5 % off) fails gradcheck's default rtol=1e-3 and passes rtol=1e-2; ``nudged`` (0.05 % off)
#: passes rtol=1e-3 and fails rtol=1e-4; ``edged`` (0.11 % off) fails rtol=1e-3 and passes
#: rtol=1.2e-3.
_SCALES = {"scaled": 1.005, "nudged": 1.0005,
           # 0.11 % off: over the contract's rtol=1e-3, under a loosened one (4e-3: rt-9;
           # 1.4e-3, within the 0.15 % this was: rt-10)
           "edged": 1.0011}
#: ``lesson``: the right gradient; ``broken``: the quotient rule's second term missing; the rest
#: the right gradient plus one of ``_FAULTS``, or times one of ``_SCALES``.
BACKWARDS = ("lesson", "broken", *_FAULTS, *_SCALES)


def stand_in_gradient(kind: str, x: torch.Tensor, grad_output: torch.Tensor) -> torch.Tensor:
    """The stand-in's backward as ``kind`` says (``BACKWARDS``). Every kind is computed, so
    that answering takes the same work whichever was chosen."""
    if kind not in BACKWARDS:
        raise ValueError(f"unknown stand-in backward {kind!r}")
    x = x.detach()
    with torch.enable_grad():
        leaf = x.clone().requires_grad_()
        (lesson,) = torch.autograd.grad(_lesson_op(leaf), leaf)
    grads = {"lesson": lesson, "broken": 3 * x ** 2 / (1 + x.abs().sum()),
             **{fault: lesson + term(x) for fault, term in _FAULTS.items()},
             **{kind: lesson * factor for kind, factor in _SCALES.items()}}
    return grad_output * grads[kind]


def fresh_stand_ins(observed: dict,
                    backward: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
                    scale: float | None = None, offset: float = 0.0) -> dict[str, Any]:
    """A fresh stand-in for one call: a class named ``MyOp`` deriving straight from
    ``torch.autograd.Function``, whose forward is the lesson's op (recording its input's dtype
    in ``observed["dtypes"]`` so that a check can tell which precision the caller used) and
    whose backward is ``backward(x, grad_output)``: the one stand-in is the same object, code
    and closure whichever backward the judge chose, so a ``check_my_op`` can only tell a right
    op from a wrong one by checking the gradient. Each call of ``MyOp.apply`` (``my_op``) also
    notes in ``observed["grad_modes"]`` whether autograd recorded it (``grad_mode``), the same
    for either backward, so that a check can say why a correct op was rejected; and each
    backward run with grad mode on (``create_graph=True``: gradgradcheck) is counted in
    ``observed["graph_backwards"]``. With ``scale``, the op is ``scale`` times the lesson's,
    forward and backward alike (the upstream gradient scaled before the judge is asked), and
    its forward is shifted by ``offset`` (a constant: the backward stays): an op whose backward
    is right for its own forward but which the lesson's formula does not describe, not even
    times the ratio of its forward to the lesson's, so that comparing with the formula is told
    from gradcheck (red teams rt-8, rt-9). Both travel in the request; which backward the judge
    gives still does not."""
    seen = observed.setdefault("dtypes", [])
    modes = observed.setdefault("grad_modes", [])

    def apply(cls: type, *args: Any, **kwargs: Any) -> Any:
        modes.append(grad_mode(args))
        return torch.autograd.Function.apply.__func__(cls, *args, **kwargs)

    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        seen.append(str(x.dtype).replace("torch.", ""))
        ctx.save_for_backward(x)
        return _lesson_op(x) if scale is None else _lesson_op(x) * scale + offset

    def stand_in_backward(ctx: Any, grad_output: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        if torch.is_grad_enabled():  # a backward building a graph: a double backward's first
            observed["graph_backwards"] = observed.get("graph_backwards", 0) + 1
        return backward(x, grad_output if scale is None else grad_output * scale)

    class MyOp(torch.autograd.Function):
        pass

    MyOp.forward, MyOp.backward = staticmethod(forward), staticmethod(stand_in_backward)
    MyOp.apply = classmethod(apply)
    MyOp.__module__, MyOp.__qualname__ = "__main__", "MyOp"
    return {"stand_in": MyOp, "stand_in_apply": MyOp.apply}


#: How the stand-in op was called (``grad_mode``), one word per call: only ``recording`` lets
#: autograd record the op, so that gradcheck has an analytical gradient to compare.
GRAD_MODES = ("recording", "inference_mode", "no_grad", "inference_tensor",
              "input_without_grad")


def grad_mode(args: tuple) -> str:
    """Whether autograd records a call of the stand-in op on ``args``, and if not, why: the
    call ran under ``torch.inference_mode()``, with grad mode off (``torch.no_grad()``, a
    ``@torch.no_grad()`` decorator, ``set_grad_enabled(False)``), on a tensor made in inference
    mode, or on tensors none of which requires grad."""
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    if torch.is_inference_mode_enabled():
        return "inference_mode"
    if not torch.is_grad_enabled():
        return "no_grad"
    if any(t.is_inference() for t in tensors):
        return "inference_tensor"
    if not any(t.requires_grad for t in tensors):
        return "input_without_grad"
    return "recording"


def asked_backward(ask: Callable[[dict], dict]) -> Callable[[torch.Tensor, torch.Tensor],
                                                              torch.Tensor]:
    """The stand-in's backward in a worker: the judge computes it (``ask`` sends the saved
    input and the upstream gradient, and returns the judge's answer)."""
    def backward(x: torch.Tensor, grad_output: torch.Tensor) -> torch.Tensor:
        answer = ask({"backward": {"x": wire.encode(x.detach()),
                                   "grad_output": wire.encode(grad_output.detach())}})
        if "ok" not in answer:
            raise RuntimeError(f"the grader could not compute this backward: "
                               f"{str(answer.get('error'))[:200]}")
        return wire.decode(answer["ok"])

    return backward


def no_judge(question: dict) -> dict:
    return {"error": "no grader to ask in this process"}
