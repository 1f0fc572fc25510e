"""Which of torch's device questions a call asked while devices were simulated
(``simulate_devices``): ``observed["devices_asked"]``, each question's label once, in the order
first asked. Heard in the student's process, so it words a failure, never scores one.

Blind round zzi's ``pick_device`` asked ``torch.cuda.is_initialized()`` ("CUDA is set up and
ready"), which is False until the process has used CUDA, and was told only that it never
picked cuda. The questions the simulation answers (``simulated_devices``) are heard, and so
are torch's others that a student may take for "is there a GPU" but that say something else:
whether the build has CUDA, cuDNN or MPS, a setting, the GPU's features, the environment.
Asked, each is noted and answers as it would have (the simulation's answer, or torch's). With
``as_available`` (asked by the judge only after a ``pick_device`` failed), each of the others
answers as the simulated availability would (cuda's for the cuda ones, mps's for mps's), so
that the judge can confirm one was the cause: asked so, the answers come right.

A question is noted only in the thread that entered the simulation, asked by code other than
torch's own and outside another watched question (torch's ``is_bf16_supported`` asks
``is_available``, its ``_lazy_init`` asks ``is_initialized``); the others get the answers they
would have got. Everything is put back when the call ends.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from typing import Any, Callable, Iterator

import torch

#: (module's path in torch, function) of the questions the simulation answers
SIMULATED = (("cuda", "is_available"), ("cuda", "device_count"), ("cuda", "current_device"),
             ("backends.mps", "is_available"), ("accelerator", "is_available"),
             ("accelerator", "device_count"), ("accelerator", "current_accelerator"),
             ("accelerator", "current_device_index"))
#: (module's path in torch, function, device) of the others: under ``as_available`` each
#: answers that device's availability
FUNCTIONS = (("cuda", "is_initialized", "cuda"), ("cuda", "is_bf16_supported", "cuda"),
             ("backends.cudnn", "is_available", "cuda"), ("backends.cuda", "is_built", "cuda"),
             ("backends.mps", "is_built", "mps"))
#: torch's deprecated flags (its module ``__getattr__``), label and device
FLAGS = {"has_cuda": ("torch.has_cuda", "cuda"), "has_cudnn": ("torch.has_cudnn", "cuda"),
         "has_mps": ("torch.has_mps", "mps")}
#: environment variables, with what each says under ``as_available`` when cuda is available
ENVIRONMENT = {"CUDA_VISIBLE_DEVICES": "0", "NVIDIA_VISIBLE_DEVICES": "0",
               "CUDA_HOME": "/usr/local/cuda", "CUDA_PATH": "/usr/local/cuda"}
#: every label a worker may report
QUESTIONS = frozenset({
    *(f"torch.{path}.{name}()" for path, name, *_ in (*SIMULATED, *FUNCTIONS)),
    *(label for label, _ in FLAGS.values()), "torch.backends.cudnn.enabled",
    "torch.version.cuda", *(f"os.environ[{key!r}]" for key in ENVIRONMENT)})


_TORCH = os.path.dirname(os.path.realpath(torch.__file__)) + os.sep
_PASSED = (os.path.dirname(os.path.realpath(os.__file__)) + os.sep,
           os.path.realpath(__file__))


@functools.lru_cache(maxsize=256)
def _real(filename: str) -> str:
    return os.path.realpath(filename)


def _torch_asks() -> bool:
    """Whether the nearest caller outside the standard library and this module is torch
    itself (``_lazy_init`` asking ``is_initialized()``, ``is_bf16_supported`` asking
    ``is_available()``, its reading of ``CUDA_VISIBLE_DEVICES``): torch then gets its answer
    and nothing is heard."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith("<frozen "):  # os, _collections_abc: the standard library's
            name = _real(name)
            if name.startswith(_TORCH):
                return True
            if not name.startswith(_PASSED):
                return False
        frame = frame.f_back
    return False


class Ear:
    """The questions asked in the thread that made it, outside another watched question."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.thread = threading.get_ident()
        self.depth = 0

    def mine(self) -> bool:
        """Asked in the ear's thread, by code other than torch's own."""
        return threading.get_ident() == self.thread and not _torch_asks()

    def hear(self, label: str, answer: Callable[[], Any]) -> Any:
        """``answer()``, with ``label`` noted unless another watched question is asking."""
        if self.depth == 0 and label not in self.asked:
            self.asked.append(label)
        self.depth += 1
        try:
            return answer()
        finally:
            self.depth -= 1

    def function(self, label: str, real: Callable[..., Any],
                 pretend: Callable[..., Any] | None = None) -> Callable[..., Any]:
        """``real`` (``pretend`` when given, in this thread), noting ``label`` when asked here."""
        def asked(*args: Any, **kwargs: Any) -> Any:
            if not self.mine():
                return real(*args, **kwargs)
            return self.hear(label, lambda: (pretend or real)(*args, **kwargs))
        return asked


@contextlib.contextmanager
def replaced(module: Any, name: str, value: Any) -> Iterator[None]:
    """``module.name`` is ``value`` in the block; after it, as it was (absent if it was)."""
    missing = object()
    before = vars(module).get(name, missing)
    setattr(module, name, value)
    try:
        yield
    finally:
        if before is missing:
            delattr(module, name)
        else:
            setattr(module, name, before)


def _module(path: str) -> Any:
    module: Any = torch
    for part in path.split("."):
        module = getattr(module, part, None)
    return module


class _Watched:
    """A class attribute's descriptor (``torch.backends.cudnn.enabled``), read through ``ear``;
    setting it sets the real one."""

    def __init__(self, ear: Ear, label: str, real: Any, pretend: Any) -> None:
        self.ear, self.label, self.real, self.pretend = ear, label, real, pretend

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None or not self.ear.mine():
            return self.real.__get__(obj, owner)
        return self.ear.hear(self.label, lambda: self.real.__get__(obj, owner)
                             if self.pretend is None else self.pretend)

    def __set__(self, obj: Any, value: Any) -> None:
        self.real.__set__(obj, value)


def _version_getattr(ear: Ear, cuda_version: Any, pretend: Any) -> Callable[[str], Any]:
    """``torch.version.__getattr__`` while its ``cuda`` is away: the real one, heard."""
    def getattr_(name: str) -> Any:
        if name != "cuda":
            raise AttributeError(f"module 'torch.version' has no attribute {name!r}")
        if not ear.mine():
            return cuda_version
        return ear.hear("torch.version.cuda",
                        lambda: cuda_version if pretend is None else pretend[0])
    return getattr_


def _flags_getattr(ear: Ear, real: Callable[[str], Any],
                   pretend: dict | None) -> Callable[[str], Any]:
    """torch's module ``__getattr__``, its deprecated device flags heard."""
    def getattr_(name: str) -> Any:
        if name not in FLAGS or not ear.mine():
            return real(name)
        label, device = FLAGS[name]
        return ear.hear(label, lambda: real(name) if pretend is None else pretend[device])
    return getattr_


def _environ_class(ear: Ear, base: type, pretend: bool, cuda: bool) -> type:
    """``os.environ``'s class while watched: its device variables' reads heard."""
    class Watched(base):  # type: ignore[misc, valid-type]
        def __getitem__(self, key: Any) -> Any:
            if key not in ENVIRONMENT or not ear.mine():
                return base.__getitem__(self, key)

            def answer() -> Any:
                if not pretend:
                    return base.__getitem__(self, key)
                if not cuda:
                    raise KeyError(key)
                return ENVIRONMENT[key]
            return ear.hear(f"os.environ[{key!r}]", answer)
    return Watched


@contextlib.contextmanager
def heard_devices(observed: dict, cuda: bool, mps: bool, as_available: bool) -> Iterator[None]:
    """During the block, torch's device questions heard (``observed["devices_asked"]`` after
    it), each answering as it did before the block (the simulation's answer, or torch's), or,
    with ``as_available``, the others as the availability of their device."""
    ear = Ear()
    pretend = {"cuda": cuda, "mps": mps} if as_available else None
    try:
        with contextlib.ExitStack() as stack:
            for path, name, *device in (*SIMULATED, *FUNCTIONS):
                module = _module(path)
                if callable(getattr(module, name, None)):
                    answer = None if pretend is None or not device else pretend[device[0]]
                    stack.enter_context(replaced(module, name, ear.function(
                        f"torch.{path}.{name}()", getattr(module, name),
                        None if answer is None else lambda *a, answer=answer, **k: answer)))
            _watch_attributes(stack, ear, cuda, pretend)
            yield
    finally:
        observed["devices_asked"] = list(ear.asked)


def _watch_attributes(stack: contextlib.ExitStack, ear: Ear, cuda: bool,
                      pretend: dict | None) -> None:
    """torch's flags and settings and the environment's device variables heard by ``ear``
    until ``stack`` closes."""
    real_getattr = vars(torch).get("__getattr__")
    if callable(real_getattr):
        stack.enter_context(replaced(torch, "__getattr__",
                                     _flags_getattr(ear, real_getattr, pretend)))
    cudnn_type = type(torch.backends.cudnn)
    if hasattr(vars(cudnn_type).get("enabled"), "__get__"):
        stack.enter_context(replaced(cudnn_type, "enabled", _Watched(
            ear, "torch.backends.cudnn.enabled", vars(cudnn_type)["enabled"],
            None if pretend is None else cuda)))
    if "cuda" in vars(torch.version) and "__getattr__" not in vars(torch.version):
        version = vars(torch.version)["cuda"]
        stack.enter_context(replaced(torch.version, "__getattr__", _version_getattr(
            ear, version, None if pretend is None else ("12.4" if cuda else None,))))
        stack.callback(setattr, torch.version, "cuda", version)  # back before __getattr__
        delattr(torch.version, "cuda")
    environ, base = os.environ, type(os.environ)
    try:
        environ.__class__ = _environ_class(ear, base, pretend is not None, cuda)
    except TypeError:  # not the standard library's mapping: left unheard
        return
    stack.callback(setattr, environ, "__class__", base)
