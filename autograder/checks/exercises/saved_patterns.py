"""q2_saved: the known mistakes a count of saved tensors can be, each predicted on the
grader's own hook run of the network (``saved_reference.Predictions``): a run under the wrong
mode, the parameters, distinct storages, a kind of saved tensor left out, the tensors of one
element left out, each tensor's bytes from another size of it; with what each is told
(``patterns``, ``matches``, ``only_match``)."""

from __future__ import annotations

import math
from typing import Callable

from .saved_reference import LESSON_COUNTS, Predictions


def patterns(pred: Predictions, track: bool) -> list[tuple[str, tuple[int, int] | None, str]]:
    """What each known mistake answers on this network: ``(id, prediction, hint)``, most
    specific first (``None``: not predicted in this mode)."""
    return [
        ("no-grad-wrong-run", None if track else pred.tracked,
         "track=False recorded a graph: run net(inputs) under torch.no_grad() when track is "
         "False, so nothing is saved."),
        ("counted-parameters", pred.params,
         "These are the network's parameters (how many, and their bytes), not the tensors "
         "autograd saved: count inside the pack hook, one entry per call."),
        ("unique-storages", pred.unique if track else None,
         "You counted distinct tensors, but one tensor can be saved by several operations (an "
         "activation's output is saved by it and by the next Linear): count every pack call."),
        ("bytes-assume-float32", pred.four_bytes if track else None,
         "The bytes assume 4 per element, but this network is float64: use element_size()."),
        ("storage-bytes", pred.storage if track and pred.storage != pred.tracked else None,
         "You counted the memory behind each saved view, not the view: the tensor it is a "
         "view of (t._base) or its whole storage (untyped_storage().nbytes(), the storage's "
         "size). This batch is a strided batch (every other row of a larger one): a view "
         "whose base holds more elements than it, the rows between its own. Autograd saves "
         "the view itself, and what is counted is each saved tensor's own elements: count "
         "t.numel() * t.element_size() of each tensor pack receives."),
        ("lesson-constant", LESSON_COUNTS,
         "These are the lesson's counts for its own network, not for this one (typed in, or "
         "kept from an earlier call): count the pack calls for the net and inputs you are "
         "given, on every call."),
        *((name, getattr(pred, field), f"{hint} {EVERY_PACK}") for name, field, hint in LEFT_OUT
          if track),
        (OUTPUT, pred.no_output if track and pred.output_saved_by else None, output_hint(pred)),
        ("small-tensors-skipped", pred.one_element_left_out() if track else None,
         one_element_hint(pred)),
        *((name, pred.bytes_by(size), hint(_example(pred, size))) for name, size, hint
          in BYTE_SIZES if track and pred.packed),
    ]


def matches(got: tuple[int, int], pred: Predictions, track: bool) -> list[tuple[str, str]]:
    """Every known mistake (id, hint) whose prediction here is ``got`` and not the right
    count, most specific first."""
    expected = pred.tracked if track else pred.untracked
    return [(name, hint) for name, predicted, hint in patterns(pred, track)
            if predicted is not None and tuple(predicted) != tuple(expected)
            and tuple(got) == tuple(predicted)]


#: The mistakes that leave out a kind of saved tensor (``LEFT_OUT``), by id.
LEFT_OUT_NAMES = frozenset(("weights-left-out", "leaves-left-out", "weights-and-leaves-left-out"))
#: The saved tensor that is the network's output left out (``t.data_ptr() != out.data_ptr()``,
#: ``t is not out``): named only once networks of the grader's own confirm it
#: (``saved_groups.named_by_groups``), as on one network it is one tensor of the output's size,
#: which another saved tensor (the batch, an activation saved twice) can be too.
OUTPUT = "output-not-counted"


def only_match(got: tuple[int, int], pred: Predictions, track: bool) -> tuple[str | None, str]:
    """The known mistake ``got`` is, by this network alone: the most specific match, unless a
    kind left out (``LEFT_OUT``) matches beside another mistake, or a per-tensor size
    (``BYTE_SIZES``) matches at all; then none, as one network cannot say which it is
    (``confirmed`` asks the other networks: a size is named only where it gives every one of
    their answers, as a size that only looks like one on this network's few shapes does
    not)."""
    found = matches(got, pred, track)
    names = {name for name, _ in found}
    if BYTE_NAMES & names or OUTPUT in names or (len(found) > 1 and LEFT_OUT_NAMES & names):
        return None, ""
    return found[0] if found else (None, "")


#: Every pack call counts, whatever the tensor is: what a count that skipped a kind is told.
EVERY_PACK = ("Every call of pack is a tensor autograd keeps for backward, whatever it is: "
              "count them all, without looking at what the tensor is.")
#: A kind of saved tensor a count can leave out: (id, ``Predictions`` field, what was left out).
LEFT_OUT = (
    ("weights-left-out", "no_weights",
     "These are the counts without the saved tensors that share a parameter's storage: a Linear "
     "saves its weight (as weight.t(), a view of it) to compute the gradient of its input, so "
     "weights are saved tensors too, not only activations."),
    ("leaves-left-out", "no_leaves",
     "These are the counts without the saved leaf tensors (no grad_fn): the first Linear saves "
     "the batch itself, a leaf, to compute its weight's gradient, so leaves are saved tensors "
     "too, not only the results of operations."),
    ("weights-and-leaves-left-out", "activations",
     "These are the counts of the activations alone, without the saved weights (a Linear saves "
     "weight.t(), a view of its weight) and without the saved batch (a leaf the first Linear "
     "keeps): those are saved for backward too."),
)


#: How each activation's backward uses its saved result.
_FROM_RESULT = {"Tanh": "Tanh's gradient, 1 - y**2, is computed from its result y",
                "Sigmoid": "Sigmoid's gradient, y * (1 - y), is computed from its result y",
                "ReLU": "ReLU's gradient is 1 where its result is positive and 0 elsewhere"}


def output_hint(pred: Predictions) -> str:
    """What a count without the saved tensor that is the network's output is told."""
    module = pred.output_saved_by or "the last layer"
    rule = _FROM_RESULT.get(pred.output_saved_by, f"{module}'s gradient is computed from it")
    return (f"These are the counts without {module}'s saved result, which is the network's "
            f"output: the saved tensors left out are exactly it. Autograd saves it for backward "
            f"({rule}) even though the forward also returns it: being the output does not make it "
            "any less kept for backward, and a comparison with the output (t.data_ptr() == "
            f"out.data_ptr(), t is out) drops it. {EVERY_PACK}")


def one_element_hint(pred: Predictions) -> str:
    """What a count without the packed tensors of one element is told, with their shapes."""
    shapes = [shape for shape, *_ in pred.packed if math.prod(shape) == 1]
    which = ", ".join(sorted({str(shape) for shape in shapes})) or "none"
    return (f"These are the counts with the saved tensors of one element left out ({len(shapes)} "
            f"here, of shape {which}: on a batch of one row, an activation after a Linear with "
            "one output saves its (1, 1) output). A tensor of one element is no bookkeeping "
            "scalar: backward needs it like any other. Every tensor pack receives counts, "
            "whatever its size: count each call and its numel() * element_size(), without a "
            "test on numel(), dim() or shape.")


#: What each saved tensor's bytes are: the fix a count from another size of it is told.
BYTES_FIX = ("Count t.numel() * t.element_size() for each tensor pack receives: its number of "
             "elements times the bytes of one element.")
#: Sizes a count can take for each saved tensor instead of ``numel() * element_size()``:
#: (id, the bytes it counts from ``(shape, element_size, sys.getsizeof, stride)``, hint from an
#: example packed tensor where it differs, as ``(shape, numel, element_size, object_size,
#: stride)``).
BYTE_SIZES: tuple[tuple[str, Callable[..., int], Callable[[tuple], str]], ...] = (
    ("bytes-from-first-dimension", lambda shape, size, obj, *_: shape[0] * size if shape else size,
     lambda ex: "Each saved tensor's bytes were counted from its first dimension alone: len(t), "
     f"t.shape[0] and t.size(0) are its number of rows, not of elements (a saved {ex[0]} "
     f"tensor has len {ex[0][0]} but {ex[1]} elements). {BYTES_FIX}"),
    ("bytes-from-last-dimension", lambda shape, size, obj, *_: shape[-1] * size if shape else size,
     lambda ex: "Each saved tensor's bytes were counted from its last dimension alone "
     f"(t.shape[-1], t.size(-1)), not from all its elements (a saved {ex[0]} tensor has "
     f"{ex[0][-1]} entries along its last dimension but {ex[1]} elements). {BYTES_FIX}"),
    ("bytes-from-number-of-dimensions", lambda shape, size, obj, *_: len(shape) * size,
     lambda ex: "Each saved tensor's bytes were counted from its number of dimensions (t.dim(), "
     f"t.ndim, len(t.shape): {len(ex[0])} for a saved {ex[0]} tensor), not from its number "
     f"of elements ({ex[1]}). {BYTES_FIX}"),
    ("bytes-without-element-size", lambda shape, size, obj, *_: math.prod(shape),
     lambda ex: "These are the saved tensors' numbers of elements, not their bytes: numel() "
     f"counts elements, each of which takes element_size() bytes ({ex[2]} here). {BYTES_FIX}"),
    ("bytes-in-bits", lambda shape, size, obj, *_: math.prod(shape) * size * 8,
     lambda ex: "These are bits, 8 times the bytes: torch.finfo(dtype).bits, or nbytes * 8, "
     f"counts bits. {BYTES_FIX}"),
    ("bytes-of-python-object", lambda shape, size, obj, *_: obj,
     lambda ex: "sys.getsizeof(t) is the size of the Python object that wraps a tensor "
     f"({ex[3]} bytes, whatever the tensor's shape), not of the tensor's elements. "
     f"{BYTES_FIX}"),
    ("bytes-from-first-stride",
     lambda shape, size, obj, stride: shape[0] * stride[0] * size if shape else size,
     lambda ex: "Each saved tensor's bytes were counted from its strides, its rows times the "
     "step between rows (t.stride(0) * t.shape[0]): that is its number of elements only for a "
     "contiguous tensor. A saved tensor can be a view laid out otherwise: a Linear saves "
     "weight.t(), whose rows lie 1 element apart, and a batch sliced with a step has rows "
     f"further apart than its width (a saved {ex[0]} tensor with strides {ex[4]} counts "
     f"{ex[0][0] * ex[4][0]} that way but has {ex[1]} elements). {BYTES_FIX}"),
    ("bytes-from-largest-stride", lambda shape, size, obj, stride: max(
        (n * s for n, s in zip(shape, stride)), default=1) * size,
     lambda ex: "Each saved tensor's bytes were counted from its strides, the largest of each "
     "dimension's size times its stride (the memory its elements span): that is its number "
     "of elements only where no gap lies between them. A view of a larger tensor, such as the "
     "strided batch (every other row), spans more than its own elements (a saved "
     f"{ex[0]} tensor with strides {ex[4]} spans "
     f"{max(n * s for n, s in zip(ex[0], ex[4]))} that way but has {ex[1]} elements). "
     f"{BYTES_FIX}"),
)
BYTE_NAMES = frozenset(name for name, _, _ in BYTE_SIZES)


def _example(pred: Predictions, size: Callable[..., int]) -> tuple:
    """A packed tensor whose bytes ``size`` gets wrong, as ``(shape, numel, element_size,
    object_size, stride)`` (the first one, when it gets none wrong: then it is not
    matched)."""
    wrong = [p for p in pred.packed if size(*p) != math.prod(p[0]) * p[1]] or list(pred.packed)
    shape, element, obj, stride = wrong[0]
    return shape, math.prod(shape), element, obj, stride


def extra_forwards(tracked: tuple[int, int], untracked: tuple[int, int],
                   pred: Predictions) -> int | None:
    """``k`` when the two modes' answers are the right ones plus ``k >= 1`` more tracked runs
    each (tracked = (k + 1) runs, untracked = k): a forward run again inside the hooks with
    autograd on, in both modes (a debugging ``print(net(inputs).shape)`` after the branch, a
    warm-up before it). Each pack call counted twice gives 2 runs tracked but none untracked,
    and no_grad missing one run in each: neither is this."""
    one = pred.tracked
    if one[0] <= 0:
        return None
    k, rest = divmod(untracked[0] - pred.untracked[0], one[0])

    def runs(base: tuple[int, int], n: int) -> tuple[int, int]:
        return base[0] + n * one[0], base[1] + n * one[1]

    if k < 1 or rest or tuple(untracked) != runs(pred.untracked, k) \
            or tuple(tracked) != runs(pred.tracked, k):
        return None
    return k


def extra_forwards_hint(k: int) -> str:
    """What an answer of ``k`` extra tracked forwards (``extra_forwards``) is told."""
    times = "once more" if k == 1 else f"{k} more times"
    return (f"These are the counts of net(inputs) run {times} with autograd on, in both modes: "
            f"{k + 1} tracked runs' saved tensors for track=True and {k} for track=False. A "
            "forward outside the tracked/no_grad branch but inside the saved_tensors_hooks "
            "block (a print(net(inputs).shape) or a check left there, a warm-up call) records "
            "a graph and calls pack for everything it saves, whatever track is. Run "
            "net(inputs) once inside the block (under no_grad when track is False); reuse its "
            "output, or do any other forward outside the hooks or under no_grad.")
