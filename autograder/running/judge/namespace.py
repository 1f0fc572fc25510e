"""``RemoteNamespace``: the student's globals as the sealed judge sees them, the ``env`` that
otter's test functions receive. A name is looked up in the worker on first use: a value is
fetched once and decoded from plain data, a function becomes a ``RemoteFunction``.
"""

from __future__ import annotations

from typing import Any, Iterable

from ...worker import wire
from .remote import RemoteFunction
from .reports import remote_error
from .worker_client import LOOKUP, WorkerClient


class RemoteNamespace(dict):
    """The student's globals as the judge sees them: names resolved on first use."""

    def __init__(self, client: WorkerClient):
        super().__init__()
        self.client = client
        self.missing: set[str] = set()
        self.looked_up: dict[str, tuple] = {}  # ``look_up``'s decoded replies, each used once

    def look_up(self, names: Iterable[str]) -> None:
        """Look up ``names`` (a test function's parameters, which otter fetches one after the
        other with nothing run between them) in one request, each reply read within its own
        time limit. Each reply is decoded as it arrives, before the next is read, and only what
        it decoded to is kept for the name's first use: the request's replies are never held
        parsed together, and the values of one request share one ``wire.Budget`` (all of them
        may cost the judge what one value may: docs/decoding-budgets.md). The worker looks up
        none after one that raised (``"skipped"``), as the first use of that one stops the test
        here."""
        wanted = [n for n in dict.fromkeys(names) if isinstance(n, str)
                  and not dict.__contains__(self, n) and n not in self.missing
                  and n not in self.looked_up]
        if len(wanted) < 2:
            return
        budget = wire.Budget()
        replies = self.client.stream({"op": "lookup", "names": wanted}, len(wanted),
                                     self.client.limits.call_timeout, LOOKUP)
        for name in wanted:
            outcome = self._settle(next(replies), budget)
            if outcome is not None:
                self.looked_up[name] = outcome

    def _settle(self, reply: dict, budget: wire.Budget) -> tuple[str, Any] | None:
        """What one lookup reply says, decoded now within ``budget`` (the reply itself is not
        kept): ``("value", v)``, ``("callable", None)``, ``("error", exception)``,
        ``("missing", None)``, or None for a name the worker skipped."""
        found = reply.get("ok") if isinstance(reply.get("ok"), dict) else {}
        kind = found.get("kind")
        if kind == "skipped":
            return None
        if kind == "callable":
            return "callable", None
        if kind == "value":
            try:
                return "value", wire.decode(found.get("value"), budget=budget)
            except wire.WireError as exc:
                return "value", wire.Opaque(f"unreadable value ({exc})", False)
        if "error" in reply:
            return "error", remote_error(reply["error"])
        return "missing", None

    def _fetch(self, name: str) -> bool:
        if dict.__contains__(self, name):
            return True
        if name in self.missing:
            return False
        outcome = self.looked_up.pop(name, None) or self._settle(self.client.request(
            {"op": "lookup", "name": name}, self.client.limits.call_timeout, step=LOOKUP),
            wire.Budget())
        kind, value = outcome if outcome is not None else ("missing", None)
        if kind == "callable":
            dict.__setitem__(self, name, RemoteFunction(self.client, name))
        elif kind == "value":
            dict.__setitem__(self, name, value)
        elif kind == "error":
            raise value
        else:
            self.missing.add(name)
            return False
        return True

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._fetch(name)

    def __getitem__(self, name: str) -> Any:
        if not self._fetch(name):
            raise KeyError(name)
        return dict.__getitem__(self, name)

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self else default
