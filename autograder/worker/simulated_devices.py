"""The ``simulate_devices`` arrangement: torch answers every availability question as told.

``pick_device`` is judged under each combination of cuda and mps availability, simulated on
whatever machine grades. A student may ask torch in any of its documented ways, so each of them
answers alike for the duration of the call (blind round zp: ``torch.device("cuda",
torch.cuda.current_device())`` raised on a CPU build, and ``device_count() > 0`` was never
simulated):

- ``torch.cuda``: ``is_available()``, ``device_count()`` (1 or 0), ``current_device()`` (0, or
  the error a CUDA build without a GPU raises);
- ``torch.backends.mps``: ``is_available()``, and ``is_built()`` always True: a build with MPS
  on a Mac that cannot use it (PyTorch's MPS page asks both), so an answer that asks
  ``is_built()`` alone still picks mps where it is not available (rounds c and zd);
- ``torch.accelerator`` (PyTorch 2.6+): ``is_available()``, ``device_count()``,
  ``current_accelerator()`` (cuda before mps, as a build has one accelerator), and
  ``current_device_index()``.

Each is a plain attribute of its module, put back when the call ends. Which of these, and of
torch's other device questions, the call asked is heard apart (``asked_devices``).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

import torch


def _no_gpu(*_args: Any, **_kwargs: Any) -> int:
    raise RuntimeError("No CUDA GPUs are available")


def _answers(cuda: bool, mps: bool) -> list[tuple[Any, str, Callable[..., Any]]]:
    """(module, attribute, stand-in) for every question about the devices."""
    accelerator = torch.device("cuda") if cuda else torch.device("mps") if mps else None
    answers: list[tuple[Any, str, Callable[..., Any]]] = [
        (torch.cuda, "is_available", lambda: cuda),
        (torch.cuda, "device_count", lambda: 1 if cuda else 0),
        (torch.cuda, "current_device", (lambda: 0) if cuda else _no_gpu),
        (torch.backends.mps, "is_available", lambda: mps),
        (torch.backends.mps, "is_built", lambda: True),
    ]
    module = getattr(torch, "accelerator", None)
    if module is not None:
        answers += [
            (module, "is_available", lambda *a, **k: accelerator is not None),
            (module, "device_count", lambda: 0 if accelerator is None else 1),
            (module, "current_accelerator", lambda *a, **k: accelerator),
            (module, "current_device_index", (lambda: 0) if accelerator is not None
             else _no_gpu),
        ]
    return [(m, name, fn) for m, name, fn in answers if hasattr(m, name)]


@contextlib.contextmanager
def simulated_devices(cuda: Any, mps: Any) -> Iterator[None]:
    """Every availability question torch answers says cuda is ``cuda``, mps is ``mps``."""
    answers = _answers(bool(cuda), bool(mps))
    saved = [(module, name, getattr(module, name)) for module, name, _ in answers]
    try:
        for module, name, fn in answers:
            setattr(module, name, fn)
        yield
    finally:
        for module, name, fn in saved:
            setattr(module, name, fn)
