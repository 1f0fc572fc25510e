"""The worker's request loop: JSON lines in on one descriptor, JSON lines out on another.

Requests (one JSON object a line):

- ``{"op": "run_cells", "cells": [[index, source], ...]}``: run the notebook's code cells in
  one namespace, like a kernel; a cell that raises is reported and the next one runs. The
  reply is one line per cell, written as the cell ends: ``{"ok": [entry]}`` (so that the judge
  gives each cell its own time limit, in one request).
- ``{"op": "lookup", "name": "square_grads"}``: ``{"kind": "callable"|"value"|"missing"}``,
  with the encoded value for a value. With ``"names": [...]`` instead, one such reply line
  per name, in order; after a name whose lookup raised, ``{"kind": "skipped"}`` for the rest.
- ``{"op": "call", "target": "MyOp.apply", "args": [...], "kwargs": {...}, "context": {...}}``:
  call it; the reply carries the encoded result (or the student's exception, traceback
  trimmed to their cells) and the state of each tensor or module argument after the call
  (``{"t": "unchanged"}`` for one left exactly as the judge sent it).
  With ``"backward": upstream`` the worker also runs ``result.backward(upstream)``; with
  ``"per_argument": true`` as well, it calls the target once per argument, every forward
  before the first backward (graphs alive together), and returns the list of results.
  During a call the worker may ask the judge a question (``{"ask": {...}}`` on the reply
  pipe: the grader's stand-in op asks for its backward) and reads the answer (one line on the
  request pipe) before the call goes on.

Replies are ``{"ok": ...}`` or ``{"error": {...}}``. Student output goes to fd 1/2, which the
judge caps; the protocol never shares a descriptor with it.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any, Callable, Iterator

import numpy as np
import torch
from torch import nn

from . import wire
from .after_call import args_after, encode_result, param_refs
from .arrangements import arranged
from .cells import prepare
from .kept_answers import hand_over
from .kept_arguments import KeptArguments
from .stand_in import no_judge

CELL_FILE = "<cell {}>"


def student_traceback(exc: BaseException) -> str:
    """Frames from the student's cells only (their code), then the exception line."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f.filename.startswith("<cell ")]
    lines = ["Traceback (your code only):"] + [x.rstrip("\n") for x in traceback.format_list(frames)]
    lines += [x.rstrip("\n") for x in traceback.format_exception_only(type(exc), exc)]
    return "\n".join(lines)[:8000]


def _text(exc: BaseException) -> str:
    """``str(exc)``, which runs the student's ``__str__``: never raises."""
    try:
        return str.__str__(str(exc))
    except Exception:  # noqa: BLE001 - a __str__ that raises or returns a non-str
        return f"<{type(exc).__name__} whose str() failed>"


def error_of(exc: BaseException) -> dict:
    return {"type": type(exc).__name__[:100], "message": _text(exc)[:2000],
            "traceback": student_traceback(exc)}


def _flush_student_output() -> None:
    """Push what the student printed to fd 1/2 before the reply, so that the judge's capped
    copy of the output has it (block-buffered pipes otherwise hold it until exit)."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - the student may have replaced or closed them
            pass


class Worker:
    """Holds the student's namespace and answers the judge's requests."""

    def __init__(self, ask: Callable[[dict], dict] | None = None) -> None:
        self.namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
        #: puts a question to the judge during a call (``stand_in.asked_backward``)
        self.ask = ask or no_judge
        #: the judge's tensors and modules, the same objects call after call
        self.kept = KeptArguments()

    def run_cells(self, cells: list) -> dict:
        return {"ok": list(self.each_cell(cells))}

    def each_cell(self, cells: list) -> Iterator[dict]:
        """Run ``cells`` in order, yielding each one's report entry as it ends."""
        for index, source in cells:
            cell = prepare(int(index), str(source))
            entry: dict[str, Any] = {"index": cell.index, "notes": list(cell.notes)}
            try:
                exec(compile(cell.source, CELL_FILE.format(cell.index + 1), "exec"),
                     self.namespace)
                entry["status"] = "ok"
            except BaseException as exc:  # SystemExit in a cell is a result too
                if isinstance(exc, KeyboardInterrupt):
                    raise
                entry.update(status="error", error=error_of(exc))
            yield entry

    def resolve(self, target: str) -> Any:
        head, *rest = str(target).split(".")
        value = self.namespace[head]
        for part in rest:
            value = getattr(value, part)
        return value

    def lookup(self, name: str) -> dict:
        try:
            value = self.resolve(name)
        except (KeyError, AttributeError):
            return {"ok": {"kind": "missing"}}
        except BaseException as exc:  # noqa: BLE001 - a property may raise anything
            return {"error": error_of(exc)}
        if callable(value) and not isinstance(value, (torch.Tensor, nn.Module, np.ndarray)):
            return {"ok": {"kind": "callable"}}
        return {"ok": {"kind": "value", "value": wire.encode(value)}}

    def call(self, target: str, args: list, kwargs: dict, context: dict,
             backward: dict | None = None, per_argument: bool = False,
             keep: list | None = None) -> dict:
        """Call ``target``; with ``backward`` (an encoded upstream gradient), also run
        ``result.backward(upstream)`` so that the arguments' gradients come back. With
        ``per_argument`` (and ``backward``), call ``target`` once per argument, every forward
        before the first backward, then each result's backward in order; the results come
        back as a list. ``keep``: the judge's handle per argument, for the tensors and
        modules it keeps as the same objects between calls (``kept_arguments``)."""
        fn = self.resolve(target)
        sent, args = args, self.kept.arguments(args, keep)
        kwargs = {str(k): wire.decode(v) for k, v in kwargs.items()}
        reply: dict = {}
        try:
            reply = self._called(fn, args, kwargs, context, backward, per_argument, sent)
        finally:  # a reply never built (its answer could not be encoded): nothing is kept
            after = reply.get("args_after")
            self.kept.settle(args, keep, sent, after if isinstance(after, list) else [])
        return reply

    def _called(self, fn: Any, args: list, kwargs: dict, context: dict, backward: Any,
                per_argument: bool, sent: list) -> dict:
        before = param_refs(args, "before")
        observed: dict = {}
        try:
            with arranged(fn, context, self.ask, args) as observed:
                if backward is not None and per_argument:
                    result = [fn(arg, **kwargs) for arg in args]
                    for out in result:
                        out.backward(wire.decode(backward))
                else:
                    result = fn(*args, **kwargs)
                    hand_over(observed, result)
                    if backward is not None:
                        result.backward(wire.decode(backward))
        except BaseException as exc:  # SystemExit in a call is a result too
            if isinstance(exc, KeyboardInterrupt):
                raise
            return {"error": error_of(exc), "args_after": args_after(args, before, sent),
                    "observed": observed}
        return {"ok": encode_result(result, args, before),
                "args_after": args_after(args, before, sent), "observed": observed}


def ask_judge(rfile: Any, wfile: Any, question: dict) -> dict:
    """Put ``question`` to the judge in the middle of a call (``{"ask": question}`` on the
    reply pipe) and return its answer, the next line on the request pipe."""
    wfile.write(json.dumps({"ask": question}, allow_nan=False).encode() + b"\n")
    line = rfile.readline()
    if not line:
        raise EOFError("the grader closed the connection")
    answer = json.loads(line)
    return answer if isinstance(answer, dict) else {"error": "malformed answer"}


def serve(fd_in: int, fd_out: int) -> None:
    """Answer requests until the judge closes the pipe."""
    with os.fdopen(fd_in, "rb") as rfile, os.fdopen(fd_out, "wb", buffering=0) as wfile:
        worker = Worker(ask=lambda question: ask_judge(rfile, wfile, question))
        for line in rfile:
            request = json.loads(line)
            if request.get("op") == "run_cells":  # a line per cell, as each ends
                try:
                    for entry in worker.each_cell(request["cells"]):
                        _reply(wfile, {"ok": [entry]})
                except Exception as exc:  # noqa: BLE001 - a malformed request: its reply says so
                    _reply(wfile, {"error": {"type": "ProtocolError", "traceback": "",
                                             "message": f"{type(exc).__name__}: {exc}"[:300]}})
                continue
            if request.get("op") == "lookup" and isinstance(request.get("names"), list):
                skip = False  # a line per name
                for name in request["names"]:
                    reply = ({"ok": {"kind": "skipped"}} if skip else
                             _handled(lambda name=name: worker.lookup(name)))
                    skip = _reply(wfile, reply) or skip  # the judge's test stops at an error
                continue
            _reply(wfile, _handled(lambda request=request: _handle(worker, request)))


def _handle(worker: Worker, request: dict) -> dict:
    op = request.get("op")
    if op == "lookup":
        return worker.lookup(request["name"])
    if op == "call":
        return worker.call(request["target"], request.get("args", []),
                           request.get("kwargs", {}), request.get("context", {}),
                           request.get("backward"), request.get("per_argument") is True,
                           request.get("keep"))
    return {"error": {"type": "ProtocolError", "message": f"unknown op {op!r}", "traceback": ""}}


def _handled(handle: Callable[[], dict]) -> dict:
    """``handle()``'s reply, or the error reply for what it raised."""
    try:
        return handle()
    except wire.WireError as exc:
        return {"error": {"type": "WireError", "message": str(exc), "traceback": "",
                          "wire": True}}
    except Exception as exc:  # noqa: BLE001 - see below
        # a value that lies about its type (a ``__class__`` property, a tensor subclass whose
        # ``__torch_function__`` raises) or a lookup that raises while the worker encodes it:
        # the result cannot be read, the worker lives on
        return {"error": {"type": "WireError", "message": f"{type(exc).__name__}: "
                          f"{_text(exc)[:300]}", "traceback": "", "wire": True}}


def _reply(wfile: Any, reply: dict) -> bool:
    """Write one reply line after the student's output so far; whether it wrote an error."""
    _flush_student_output()
    try:
        data = json.dumps(reply, allow_nan=False).encode()
    except (ValueError, TypeError, RecursionError) as exc:  # e.g. an int too long to print
        message = f"{type(exc).__name__}: {_text(exc)[:300]}"
        reply = {"error": {"type": "WireError", "message": message, "traceback": "",
                           "wire": True}}
        data = json.dumps(reply).encode()
    wfile.write(data + b"\n")
    return "error" in reply


if __name__ == "__main__":
    serve(int(sys.argv[1]), int(sys.argv[2]))
