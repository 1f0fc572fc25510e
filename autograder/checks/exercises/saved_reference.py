"""q2_saved's reference: what autograd saves for one forward of a network, counted by the
grader's own pack hook on its own network in the torch build that grades (``predict``, with the
answers each known mistake would give instead), and the random networks and batches the check
draws, redrawn until no two mistakes predict the same answer (``draw_unambiguous``).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from torch import nn

#: The lesson's printed counts, used only to recognise a copied constant, never as a reference.
LESSON_COUNTS = (4, 272)
ACTIVATIONS = (nn.ReLU, nn.Tanh, nn.Sigmoid)
#: The activations of the last network each count_saved check asks about: each saves what its
#: own backward rule needs (GELU, SiLU, Softplus and LeakyReLU their input, ELU its output), so
#: a count read from a table of the four layers above fails there (red teams rt-9, rt-10)
OTHER_ACTIVATIONS = (nn.GELU, nn.SiLU, nn.Softplus, nn.LeakyReLU, nn.ELU)


@dataclass(frozen=True)
class Predictions:
    """What ``count_saved`` returns for one (net, inputs), correct and under each known mistake.

    Attributes:
        tracked: the reference for ``track=True`` (pack events, bytes).
        untracked: the reference for ``track=False`` (the grader's own no_grad run).
        params: the network's parameters counted instead (tensors, bytes).
        unique: distinct storages among the packed tensors instead of pack events.
        four_bytes: pack events with 4 bytes per element assumed (differs in float64).
        storage: each packed tensor's whole storage counted (``untyped_storage().nbytes()``)
            instead of its own elements (differs where the batch is a view of a larger one).
        no_weights: the packed tensors that share a parameter's storage (a Linear saves
            ``weight.t()``, a view of its weight) left out: "weights are not activations".
        no_leaves: the packed leaves (the batch the first Linear saves: no ``grad_fn``) left
            out, as a count of non-leaf tensors only gives.
        activations: both left out: only the tensors the forward computed.
        packed: each packed tensor's ``(shape, element_size(), sys.getsizeof(), stride())``,
            in pack order: what a per-tensor size other than ``numel() * element_size()`` is
            replayed on (``bytes_by``).
        no_output: the packed tensors that share the network's output's storage left out (the
            result a last Tanh, Sigmoid or ReLU saves is the output itself): what a count that
            skips ``t.data_ptr() == out.data_ptr()`` or ``t is out`` returns. The tracked count
            where the output is not saved (a network that ends in a Linear).
        output_saved_by: the type of the module whose saved result is the output
            (``"Tanh"``), ``""`` where the output is not saved.
    """

    tracked: tuple[int, int]
    untracked: tuple[int, int]
    params: tuple[int, int]
    unique: tuple[int, int]
    four_bytes: tuple[int, int]
    storage: tuple[int, int]
    no_weights: tuple[int, int]
    no_leaves: tuple[int, int]
    activations: tuple[int, int]
    packed: tuple[tuple[tuple[int, ...], int, int, tuple[int, ...]], ...] = ()
    no_output: tuple[int, int] | None = None
    output_saved_by: str = ""

    def bytes_by(self, size: Callable[..., int]) -> tuple[int, int]:
        """The tracked count with each packed tensor's bytes taken as ``size(shape,
        element_size, object_size, stride)`` instead of ``numel() * element_size()``."""
        return len(self.packed), sum(size(*p) for p in self.packed)

    def one_element_left_out(self) -> tuple[int, int]:
        """The tracked count without the packed tensors of one element (a (1, 1) output a
        Sigmoid keeps): what a pack hook that counts only ``numel() > 1`` returns."""
        kept = [p for p in self.packed if math.prod(p[0]) != 1]
        return len(kept), sum(math.prod(shape) * size for shape, size, *_ in kept)


def layout_copy(t: torch.Tensor) -> torch.Tensor:
    """A copy of ``t`` of its own, with ``t``'s strides: a strided view (every other row of a
    larger batch) stays one, its storage as large as the view reaches (``clone`` would make it
    contiguous). The storage is zeroed before the view's values are written: the elements
    between them are sent to the student's process with the view, and must hold nothing of the
    grader's memory. A contiguous ``t`` is ``t.clone()``."""
    if t.is_contiguous() or t.numel() == 0:
        return t.clone()
    span = 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
    copy_ = torch.zeros(span, dtype=t.dtype).as_strided(t.shape, t.stride())
    with torch.no_grad():
        copy_.copy_(t)
    return copy_


def _packed(net: nn.Module, inputs: torch.Tensor, track: bool,
            kinds: list[tuple[bool, bool]] | None = None,
            outputs: list[torch.Tensor] | None = None) -> list[torch.Tensor]:
    """The tensors the pack hook sees during one forward of ``net`` itself, each detached (the
    same storage, dtype and size; no graph). With ``kinds``, what each one was is appended
    there, as the detached copy no longer shows it: ``(is a leaf, shares a parameter's
    storage)``; with ``outputs``, the forward's output, detached.

    ``net`` is the grader's own network: a forward changes nothing of it (no backward runs,
    the outputs are dropped), so no copy is made. A ``copy.deepcopy`` here counted the same
    tensors and bytes and was half of the count_saved checks' CPU (``predict`` runs this three
    times for each drawn network, and a network is drawn again until it is unambiguous).

    What the hook hands back for the graph to keep is detached too: the saved tensor itself
    would hold its ``grad_fn``, which holds the saved tensor, a cycle through the C++ graph
    that Python's collector cannot see, so every forward's copy of the network and its
    activations would stay in the judge's memory for the rest of the run."""
    packed: list[torch.Tensor] = []
    weights = {p.untyped_storage().data_ptr() for p in net.parameters()}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        if kinds is not None:
            kinds.append((tensor.is_leaf, tensor.untyped_storage().data_ptr() in weights))
        packed.append(tensor.detach())
        return packed[-1]

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        with torch.set_grad_enabled(track):
            out = net(layout_copy(inputs))
    if outputs is not None and isinstance(out, torch.Tensor):
        outputs.append(out.detach())
    return packed  # the list keeps every packed tensor alive, so storages stay distinct


def _nbytes(tensors: list[torch.Tensor]) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def with_tracked_inputs(net: nn.Module, inputs: torch.Tensor) -> tuple[int, int]:
    """The tracked count (pack events, bytes) for a copy of ``inputs`` made to require grad:
    what a ``count_saved`` that turns tracking on for the batch returns. Computed only to
    name a wrong answer, not for every drawn network (``predict``)."""
    packed = _packed(net, inputs.detach().clone().requires_grad_(), True)
    return len(packed), _nbytes(packed)


def predict(net: nn.Module, inputs: torch.Tensor) -> Predictions:
    """Run the grader's own hooks on copies of ``net``; predict right and wrong answers."""
    kinds: list[tuple[bool, bool]] = []
    outputs: list[torch.Tensor] = []
    packed = _packed(net, inputs, True, kinds, outputs)

    def without(leaves: bool, weights: bool) -> tuple[int, int]:
        kept = [t for t, (leaf, weight) in zip(packed, kinds)
                if not (leaves and leaf) and not (weights and weight)]
        return len(kept), _nbytes(kept)

    storages: dict[int, torch.Tensor] = {}
    for t in packed:
        storages.setdefault(t.untyped_storage().data_ptr(), t)
    params = list(net.parameters())
    untracked = _packed(net, inputs, False)
    output = {o.untyped_storage().data_ptr() for o in outputs if o.numel()}
    not_output = [t for t in packed if t.untyped_storage().data_ptr() not in output]
    last = [m for m in net.modules() if not list(m.children())][-1:] or [net]
    return Predictions(
        tracked=(len(packed), _nbytes(packed)),
        untracked=(len(untracked), _nbytes(untracked)),
        params=(len(params), _nbytes(params)),
        unique=(len(storages), _nbytes(list(storages.values()))),
        four_bytes=(len(packed), 4 * sum(t.numel() for t in packed)),
        storage=(len(packed), sum(t.untyped_storage().nbytes() for t in packed)),
        no_weights=without(leaves=False, weights=True),
        no_leaves=without(leaves=True, weights=False),
        activations=without(leaves=True, weights=True),
        packed=tuple((tuple(t.shape), t.element_size(), sys.getsizeof(t), tuple(t.stride()))
                     for t in packed),
        no_output=(len(not_output), _nbytes(not_output)),
        output_saved_by=type(last[0]).__name__ if len(not_output) < len(packed) else "",
    )


def draw_case(rng: np.random.Generator, *, dtype: torch.dtype, min_linear: int = 1,
              batch: int | None = None, one_output: bool = False,
              max_linear: int = 3, activations: tuple[type[nn.Module], ...] = ACTIVATIONS
              ) -> tuple[nn.Sequential, torch.Tensor]:
    """A random stack of Linear layers and ``activations`` (ReLU / Tanh / Sigmoid) and a batch
    for it, values from ``rng`` (``batch`` rows, else a drawn number). With ``one_output``, the
    last Linear has one output and an activation follows it: on a one-row batch it saves a
    (1, 1) tensor, of one element."""
    n_linear = int(rng.integers(min_linear, max_linear + 1))
    widths = [int(w) for w in rng.integers(2, 10, size=n_linear + 1)]  # width 1 blurs mistakes
    if one_output:
        widths[-1] = 1
    layers: list[nn.Module] = []
    with torch.random.fork_rng(devices=[]):  # leave the student's global torch RNG alone
        for i in range(n_linear):
            layers.append(nn.Linear(widths[i], widths[i + 1], bias=bool(rng.random() < 0.8)))
            if i < n_linear - 1 or one_output or rng.random() < 0.5:
                layers.append(activations[int(rng.integers(len(activations)))]())
    net = nn.Sequential(*layers).to(dtype)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape))))
    batch = int(rng.integers(1, 9)) if batch is None else batch
    return net, torch.from_numpy(rng.standard_normal((batch, widths[0]))).to(dtype)


def unambiguous(pred: Predictions) -> bool:
    """Whether every known mistake predicts its own answer, so a match names one mistake only.

    A mistake that predicts the right answer (no shared storage, float32 bytes) is left out: it
    cannot be seen on that network and is not matched.
    """
    wrong = [pred.params, LESSON_COUNTS, pred.untracked]
    wrong += [p for p in (pred.unique, pred.four_bytes, pred.one_element_left_out())
              if p != pred.tracked]
    return pred.tracked not in wrong[:3] and len(set(wrong)) == len(wrong)


def draw_unambiguous(rng: np.random.Generator, *, dtype: torch.dtype, min_linear: int,
                     batch: int | None = None, tracked_inputs: bool = False,
                     one_output: bool = False, max_linear: int = 3,
                     activations: tuple[type[nn.Module], ...] = ACTIVATIONS
                     ) -> tuple[nn.Sequential, torch.Tensor, Predictions]:
    """``draw_case`` until the mistakes' predictions differ (small nets can make two coincide)."""
    for _ in range(50):
        net, inputs = draw_case(rng, dtype=dtype, min_linear=min_linear, batch=batch,
                                one_output=one_output, max_linear=max_linear,
                                activations=activations)
        inputs.requires_grad_(tracked_inputs)
        pred = predict(net, inputs)
        if unambiguous(pred):
            break
    return net, inputs, pred
