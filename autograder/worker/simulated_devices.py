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

Each is a plain attribute of its module, put back when the call ends; and where it is a plain
Python function, that function's own code answers as told too, so that a reference the notebook
took before the call (``PROBES = (torch.cuda.is_available, ...)`` at module level, asked on every
call) hears the simulation as well (blind round zzu: a correct ``pick_device`` that looped over
such a tuple picked cpu under every simulated availability). Which of these, and of torch's
other device questions, the call asked is heard apart (``asked_devices``).
"""

from __future__ import annotations

import contextlib
import functools
import types
from typing import Any, Callable, Iterator

import torch


def _no_gpu(*_args: Any, **_kwargs: Any) -> int:
    raise RuntimeError("No CUDA GPUs are available")


#: The body of a function that raises as a CUDA build without a GPU does
_NO_GPU = "raise RuntimeError('No CUDA GPUs are available')"


def _answers(cuda: bool, mps: bool) -> list[tuple[Any, str, Callable[..., Any], str]]:
    """(module, attribute, stand-in, the stand-in's body as code of no free names) for every
    question about the devices."""
    accelerator = torch.device("cuda") if cuda else torch.device("mps") if mps else None
    picked = ("return None" if accelerator is None else
              f"return __import__('torch').device({accelerator.type!r})")
    answers: list[tuple[Any, str, Callable[..., Any], str]] = [
        (torch.cuda, "is_available", lambda: cuda, f"return {cuda!r}"),
        (torch.cuda, "device_count", lambda: 1 if cuda else 0, f"return {int(cuda)}"),
        (torch.cuda, "current_device", (lambda: 0) if cuda else _no_gpu,
         "return 0" if cuda else _NO_GPU),
        (torch.backends.mps, "is_available", lambda: mps, f"return {mps!r}"),
        (torch.backends.mps, "is_built", lambda: True, "return True"),
    ]
    module = getattr(torch, "accelerator", None)
    if module is not None:
        answers += [
            (module, "is_available", lambda *a, **k: accelerator is not None,
             f"return {accelerator is not None!r}"),
            (module, "device_count", lambda: 0 if accelerator is None else 1,
             f"return {int(accelerator is not None)}"),
            (module, "current_accelerator", lambda *a, **k: accelerator, picked),
            (module, "current_device_index", (lambda: 0) if accelerator is not None
             else _no_gpu, "return 0" if accelerator is not None else _NO_GPU),
        ]
    return [answer for answer in answers if hasattr(answer[0], answer[1])]


@functools.lru_cache(maxsize=32)
def _code(body: str) -> types.CodeType:
    """The code of ``def f(*args, **kwargs): <body>`` (no free names: it can replace the code
    of any function without a closure)."""
    space: dict[str, Any] = {}
    exec(compile(f"def f(*args, **kwargs):\n    {body}\n", "<simulated device>", "exec"), space)
    return space["f"].__code__


def _own_function(value: Any) -> types.FunctionType | None:
    """The plain Python function behind torch's ``value`` (itself, or what an ``lru_cache``
    wraps), when its code can be replaced (no closure); else ``None``."""
    target = getattr(value, "__wrapped__", value) if hasattr(value, "cache_clear") else value
    if isinstance(target, types.FunctionType) and not target.__code__.co_freevars:
        return target
    return None


@contextlib.contextmanager
def simulated_devices(cuda: Any, mps: Any) -> Iterator[None]:
    """Every availability question torch answers says cuda is ``cuda``, mps is ``mps``: its
    modules' attributes, and the functions they held, whoever holds them."""
    answers = _answers(bool(cuda), bool(mps))
    saved = [(module, name, getattr(module, name)) for module, name, *_ in answers]
    swapped: list[tuple[Any, types.FunctionType, types.CodeType]] = []
    try:
        for (module, name, fn, body), (_, _, original) in zip(answers, saved):
            target = _own_function(original)
            if target is not None and all(t is not target for _, t, _ in swapped):
                swapped.append((original, target, target.__code__))
                target.__code__ = _code(body)
                _forget(original)
            setattr(module, name, fn)
        yield
    finally:
        for original, target, code in swapped:
            target.__code__ = code
            _forget(original)
        for module, name, fn in saved:
            setattr(module, name, fn)


def _forget(function: Any) -> None:
    """Drop what an ``lru_cache`` kept (torch caches ``mps.is_available``): asked in the
    block, the simulated answer; after it, torch's own again."""
    clear = getattr(function, "cache_clear", None)
    if callable(clear):
        clear()
