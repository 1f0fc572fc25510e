"""Running the probes: ``diagnose`` tries them in a fixed order on one failing call (first
diagnosis wins), and ``explain`` puts the diagnosis into the check's verdict (its id as the
``misconception``, its calls in ``Evidence.probes``), or, without one, only the list of what was
tried.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..result import Verdict
from .inputs import ignored_arguments, input_classes
from .repetition import repeat
from .subject import Diagnosis, StopProbing, Subject
from .values import rounded, scaled


def diagnose(subject: Subject, got: Any, raised: bool = False) -> Diagnosis | None:
    """The probes in order, first diagnosis wins: state and randomness (they would make every
    later probe's answer unreliable), rounding, argument sensitivity, input classes, and a
    constant factor last."""
    try:
        if raised:
            return input_classes(subject, raised=True)
        found = repeat(subject)
        if found:
            return found
        numbers, expected = subject.numbers(got), subject.numbers(subject.expected(*subject.args))
        comparable = numbers is not None and expected is not None
        if comparable:
            subject.tried.append("rounding")
            found = rounded(numbers, expected)
            if found:
                return found
        found = ignored_arguments(subject, got) or input_classes(subject)
        if found or not comparable:
            return found
        # last: a constant factor is true of any wrong scalar answer, so it is said only when
        # nothing more specific was found (and only for two or more values)
        subject.tried.append("a constant factor")
        return scaled(numbers, expected)
    except StopProbing:
        return None


def explain(verdict: Verdict, subject: Subject, got: Any) -> Verdict:
    """``verdict`` (failed, no named mistake) with what the probes established, or with what
    they tried when none established anything. A named mistake is left as it is."""
    if verdict.ok or verdict.misconception not in (None, "raised"):
        return verdict
    raised = verdict.misconception == "raised"
    found = diagnose(subject, got, raised=raised)
    message = verdict.message.rstrip()
    if found is not None:
        evidence = dataclasses.replace(verdict.evidence, probes=[found.record()])
        return dataclasses.replace(verdict, message=f"{message} {found.message}",
                                   misconception=found.id, evidence=evidence)
    if raised:
        return verdict
    tried = sorted(set(subject.tried), key=subject.tried.index)
    checked = f" Checked without finding the cause: {', '.join(tried)}." if tried else ""
    evidence = dataclasses.replace(verdict.evidence,
                                   probes=[{"id": None, "tried": tried}] if tried else [])
    return dataclasses.replace(verdict, message=f"{message}{checked}", evidence=evidence)
