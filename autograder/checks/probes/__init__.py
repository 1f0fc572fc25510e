"""Diagnostic probes: when a check failed and no known mistake matched, a few more calls of the
student's function that locate the cause, and a message that says only what they showed.

A probe is a small function that returns a ``Diagnosis`` (a stable id, the sentence it
established, the calls it made as plain data) or ``None``. ``explain`` runs them in a fixed
order on one failing call and puts the first diagnosis into the verdict: its id becomes the
result's ``misconception`` (so the class report counts it) and its calls go to
``Evidence.probes``. Without a diagnosis the message gains only the list of what was tried,
never a guessed cause (docs/probes.md).

Probe kinds and their ids:

- ``probe.nondeterministic``: two calls on copies of one input disagree, and agree when torch's
  generator is seeded alike before each: the answer depends on torch's randomness.
- ``probe.depends-on-history``: two calls on copies of one input disagree even so: the answer
  depends on something besides the arguments that changes between calls.
- ``probe.state-on-objects``: two calls on the *same* objects disagree while calls on fresh
  copies agree: the first call left something on the caller's objects.
- ``probe.ignores-argument``: changing one argument (the reference's answer changes) leaves the
  answer as it was, at the failing input's magnitude, a thousand times closer to zero, and with
  the argument's sign flipped.
- ``probe.stops-following``: the answer stayed for the change, and changed for the same change
  a thousand times closer to zero: capped or saturated, not ignored.
- ``probe.follows-sign-only``: it stayed closer to zero too, and changed with the sign flipped.
- ``probe.input-class.<class>``: right on the nearest input outside ``<class>`` (the same values
  made integer, positive, float64, with no size-1 dimension...), wrong on the one inside it.
- ``probe.rounded`` / ``probe.scaled``: the answer equals the reference rounded to a number of
  decimals, or the reference times one constant factor.
- side effects (``changes``): what a call changed on the caller's tensors, networks and
  optimizers; checks whose contract leaves those alone score it (``modified-network``...).

Probe calls go through ``calling.call`` like the checks' own (the same wall, time limit and
budgets), on fresh copies, with torch's generator forked; a probe whose call fails or is lost
stops the probing. Every probe is bounded: at most ``MAX_CALLS`` calls per failing check.

The package holds the probes by what they diagnose: ``subject`` (the shared machinery:
``Subject``, ``InputClass``, ``Diagnosis``, ``MAX_CALLS``, ``fresh``, ``numbers_of``,
``numbers_close``, ``recorded_call``, ``StopProbing``),
``repetition`` (randomness, history, state on the objects), ``inputs`` (ignored arguments,
input classes), ``values`` (rounded, scaled), ``side_effects`` (``snapshot``, ``changes``) and
``running`` (``diagnose``, ``explain``); every public name is importable from here.
"""

from .inputs import ignored_arguments, input_classes
from .repetition import repeat
from .running import diagnose, explain
from .side_effects import changes, snapshot
from .subject import (
    MAX_CALLS,
    PROBE_SEED,
    Diagnosis,
    InputClass,
    StopProbing,
    Subject,
    fresh,
    numbers_close,
    numbers_of,
    recorded_call,
    shown_args,
)
from .values import rounded, scaled

__all__ = [
    "MAX_CALLS", "PROBE_SEED", "Diagnosis", "InputClass", "StopProbing", "Subject",
    "changes", "diagnose", "explain", "fresh", "ignored_arguments", "input_classes",
    "numbers_close", "numbers_of", "recorded_call", "repeat", "rounded", "scaled",
    "shown_args", "snapshot",
]
