"""Three of torch's heavy lazy imports, deferred until something needs more than their eager
no-ops: ``torch._dynamo`` (about 800 modules with sympy: 1-1.5 s of CPU),
``torch.fx.experimental.symbolic_shapes`` (sympy: about 0.45 s) and sympy itself (about
0.27 s), which the meta device's reference kernels import only to ask whether a value is a
``sympy.Basic`` (``torch._prims_common.elementwise_dtypes``).

Eager code imports them for almost nothing. ``Optimizer.step`` and the optimizer's other
methods import ``torch._dynamo`` for ``graph_break()`` (a no-op outside a compiled region) and
``disable(fn)`` (which changes nothing unless a compiled region calls ``fn``), and
``backward(gradient)`` and the meta device's reference kernels import ``symbolic_shapes``
for ``sym_eq``, ``expect_true`` and a few guards, all on plain shapes. No value is a
``sympy.Basic`` before sympy is loaded, so that type test has its answer without it. A grading container grades one submission: its judge and its worker each paid those
imports after the fork, on the student's wait (benchmarks/results/: the cold starts).

``install()`` puts a stand-in module in ``sys.modules`` for each. A stand-in answers those
few names itself, exactly as the real functions answer eager code, and hands every other
name to the real module, imported at that moment (``torch.compile``, a ``torch._dynamo``
submodule, a class of ``symbolic_shapes``): from then on ``sys.modules`` holds the real module
and every stand-in function defers to it. So nothing a student's code can do sees less than
torch; it only finds the import done later. ``tests/test_deferred_torch.py`` holds the
stand-ins to the real functions and to the grading path (grading each solution loads neither
module).

Written by hand: importlib's ``LazyLoader`` defers a module's execution to its first attribute
access, but ``from torch._dynamo import graph_break``, which torch does, is one.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import operator
import sys
import threading
import types
from typing import Any, Callable

DYNAMO = "torch._dynamo"
SYMBOLIC_SHAPES = "torch.fx.experimental.symbolic_shapes"
SYMPY = "sympy"
DEFERRED = (DYNAMO, SYMBOLIC_SHAPES, SYMPY)

_lock = threading.RLock()


def _real(name: str) -> types.ModuleType:
    """The real module ``name``, imported now in place of its stand-in when it is not yet."""
    with _lock:
        module = sys.modules.get(name)
        if module is not None and not isinstance(module, Deferred):
            return module
        if module is not None:
            del sys.modules[name]
            parent, _, child = name.rpartition(".")
            if getattr(sys.modules.get(parent), child, None) is module:
                delattr(sys.modules[parent], child)
        real = importlib.import_module(name)  # sets the parent's attribute again
        if module is not None:  # code that holds the stand-in finds the real names from now on
            module.__dict__.update({own: getattr(real, own) for own in STAND_INS[name]
                                    if hasattr(real, own)})
        return real


def _loaded(name: str) -> types.ModuleType | None:
    module = sys.modules.get(name)
    return None if module is None or isinstance(module, Deferred) else module


class Deferred(types.ModuleType):
    """Stands in for module ``name`` in ``sys.modules``: its own names are eager stand-ins,
    any other is the real module's (imported then)."""

    def __init__(self, name: str, spec: importlib.machinery.ModuleSpec,
                 own: dict[str, Callable[..., Any]]):
        super().__init__(name)
        self.__spec__ = spec
        self.__file__ = spec.origin
        if spec.submodule_search_locations is not None:  # a package: where its submodules are
            self.__path__ = list(spec.submodule_search_locations)
        self.__dict__.update(own)

    def __getattr__(self, attr: str) -> Any:
        if attr == "__path__":  # asked by every ``from ... import`` of a module: a module
            raise AttributeError(attr)  # (a package has its own, in ``__dict__``)
        return getattr(_real(self.__name__), attr)


# --- torch._dynamo: what eager code asks of it ---------------------------------------------

def graph_break(msg: str = "") -> None:
    """``torch._dynamo.graph_break``: marks a graph break for the compiler; eager code runs
    straight through it (the real function's body is ``pass``)."""
    real = _loaded(DYNAMO)
    if real is not None:
        real.graph_break(msg)


def disable(fn: Callable[..., Any] | None = None, recursive: bool = True, *,
            reason: str | None = None, wrapping: bool = True) -> Any:
    """``torch._dynamo.disable``: ``fn`` kept out of compiled regions. Outside any, calling it
    is calling ``fn``; once the real ``torch._dynamo`` is loaded (a compile began), each call
    goes through the real ``disable(fn)``, made once."""
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason, wrapping=wrapping)
    made: list[Callable[..., Any]] = []

    def call(*args: Any, **kwargs: Any) -> Any:
        real = _loaded(DYNAMO)
        if real is None:
            return fn(*args, **kwargs)
        if not made:
            made.append(real.disable(fn, recursive, reason=reason, wrapping=wrapping))
        return made[0](*args, **kwargs)

    if wrapping:
        functools.update_wrapper(call, fn)
    return call


# --- torch.fx.experimental.symbolic_shapes: what eager shapes ask of it --------------------
# Each answer below is the real function's on plain Python values, or ``SYMBOLIC``: then
# (and whenever keywords are passed) the real function answers.

SYMBOLIC = object()


def _plain(x: Any) -> bool:
    if isinstance(x, (tuple, list)):
        return all(_plain(v) for v in x)
    return type(x) is int or type(x) is bool


def _sym_eq(x: Any, y: Any) -> Any:
    """Equal length and equal items, as the real one reduces them."""
    if not (_plain(x) and _plain(y)):
        return SYMBOLIC
    if isinstance(x, (tuple, list)) and isinstance(y, (tuple, list)):
        if len(x) != len(y):
            return False
        items = [_sym_eq(a, b) for a, b in zip(x, y)]  # every pair, as the real one does
        return SYMBOLIC if SYMBOLIC in items else all(items)
    if isinstance(x, (tuple, list)) or isinstance(y, (tuple, list)):
        return SYMBOLIC  # the real one raises
    return x == y


def _itself(plain: type, optional: int = 0) -> Callable[..., Any]:
    """The value itself when it is of type ``plain`` (``expect_true``, ``guard_or_false``,
    ``guard_int``...), with at most ``optional`` more arguments (which it then ignores)."""
    return lambda a, *rest: a if type(a) is plain and len(rest) <= optional else SYMBOLIC


def _joined(join: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    """Plain bools joined by ``join`` from the left (``sym_and``, ``sym_or``)."""
    def answer(x: Any, *others: Any) -> Any:
        if type(x) is not bool or any(type(y) is not bool for y in others):
            return SYMBOLIC
        for y in others:
            x = join(x, y)
        return x
    return answer


def _not_symbolic(answer: Any) -> Callable[..., Any]:
    """``answer`` for anything but a ``SymInt``/``SymFloat``/``SymBool`` (``has_guarding_hint``:
    True; ``is_nested_int``: False)."""
    def stand_in(a: Any) -> Any:
        import torch

        return SYMBOLIC if isinstance(a, (torch.SymInt, torch.SymFloat, torch.SymBool)) \
            else answer
    return stand_in


PLAIN_ANSWERS: dict[str, Callable[..., Any]] = {
    "sym_eq": _sym_eq,
    "sym_and": _joined(operator.and_),
    "sym_or": _joined(operator.or_),
    "expect_true": _itself(bool, optional=1),
    "guard_bool": _itself(bool),
    "guard_or_false": _itself(bool),
    "guard_or_true": _itself(bool),
    "guard_size_oblivious": _itself(bool),
    "statically_known_true": _itself(bool),
    "guard_int": _itself(int),
    "guarding_hint_or_throw": lambda a: a if type(a) is bool or type(a) is int else SYMBOLIC,
    "has_guarding_hint": _not_symbolic(True),
    "is_nested_int": _not_symbolic(False),
}


def _shapes_stand_in(name: str) -> Callable[..., Any]:
    answer = PLAIN_ANSWERS[name]

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            try:
                value = answer(*args)
            except TypeError:  # not the arguments it takes: the real one says so
                value = SYMBOLIC
            if value is not SYMBOLIC:
                return value
        return getattr(_real(SYMBOLIC_SHAPES), name)(*args, **kwargs)

    stand_in.__name__ = stand_in.__qualname__ = name
    return stand_in


# --- sympy: the one thing eager code asks of it ---------------------------------------------

class _UntilLoaded(type):
    """A sympy class's stand-in answers ``isinstance`` and ``issubclass``: False while sympy
    is not loaded (no object can be of a class never defined), the real class's answer once
    it is."""

    def __instancecheck__(cls, obj: Any) -> bool:
        real = _loaded(SYMPY)
        return real is not None and isinstance(obj, getattr(real, cls.__name__))

    def __subclasscheck__(cls, sub: type) -> bool:
        real = _loaded(SYMPY)
        return real is not None and issubclass(sub, getattr(real, cls.__name__))


class Basic(metaclass=_UntilLoaded):
    """``sympy.Basic`` where ``elementwise_dtypes`` tests a value against it; made, it is the
    real class's instance."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        return _real(SYMPY).Basic(*args, **kwargs)


STAND_INS: dict[str, dict[str, Any]] = {
    DYNAMO: {"graph_break": graph_break, "disable": disable},
    SYMBOLIC_SHAPES: {name: _shapes_stand_in(name) for name in PLAIN_ANSWERS},
    SYMPY: {"Basic": Basic},
}


class _Submodules(importlib.abc.MetaPathFinder):
    """A submodule of a stand-in (``import torch._dynamo.config``) imports the real package
    first; one the real package imported already is given back as it is (the import system
    would otherwise execute it a second time, making two config modules)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        parent = name.rpartition(".")[0]
        if not isinstance(sys.modules.get(parent), Deferred):
            return None
        _real(parent)
        existing = sys.modules.get(name)
        if existing is None:
            return None  # the path finders find it in the real package's __path__
        return importlib.util.spec_from_loader(name, _Existing(existing))


class _Existing(importlib.abc.Loader):
    def __init__(self, module: types.ModuleType):
        self.module, self.spec = module, module.__spec__

    def create_module(self, spec: Any) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self.spec  # the import system set ours: the module's own again


_FINDER = _Submodules()


def install() -> bool:
    """Put the stand-ins in ``sys.modules`` where their modules are not imported yet (torch
    is imported here); False where torch's layout is not what they stand in for."""
    import torch  # noqa: F401

    with _lock:
        for name in DEFERRED:
            if name in sys.modules:
                continue
            spec = importlib.util.find_spec(name)  # finds the file, imports nothing of it
            if spec is None:
                return False
            module = Deferred(name, spec, STAND_INS[name])
            sys.modules[name] = module
            parent, _, child = name.rpartition(".")
            if parent:  # sympy is a package of its own
                setattr(sys.modules[parent], child, module)
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)
    return True
