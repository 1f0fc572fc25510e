"""Diagnostic probes (autograder/checks/probes/): does each probe kind name the cause of a
wrong answer it can locate, leave correct answers in unusual styles alone, and, when nothing
explains a wrong answer, say what differed and what was tried without a cause?

The variants under ``tests/files/probe_variants/`` were written for these tests (none is a
mistake the contract lists). Each starts with::

    # kind: wrong | correct
    # probe: <the misconception id the failing check must carry> | none
    # feedback: <a phrase its message must contain>

Only the variant's own question is graded (in-process, two seeds): the probes add calls only
to failing checks, so the rest of the notebook would cost time and prove nothing new.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
import torch
from torch import nn

from autograder.checks import all_checks, probes
from autograder.checks.calling import call
from autograder.harness import run_check
from notebooks import ROOT, namespace, solution, with_answer

PROBE_VARIANTS = ROOT / "tests" / "files" / "probe_variants"
SEEDS = (0, 1)
#: Phrases of the removed fallback sentences: each claimed a cause no test had established.
GUESSES = ("Check which leaf", "Check the leaf", "Check the update rule", "Record one entry",
           "Return model(batch)", "Split X and y")


@dataclass(frozen=True)
class ProbeVariant:
    assignment: str
    question: str
    name: str
    kind: str
    probe: str
    feedback: str
    source: str

    @property
    def id(self) -> str:
        return f"{self.question}/{self.name}"


def probe_variants() -> list[ProbeVariant]:
    found = []
    for path in sorted(PROBE_VARIANTS.glob("*/*/*.py")):
        text = path.read_text(encoding="utf-8")
        header = dict(re.findall(r"^# (kind|probe|feedback): ?(.*)$", text, flags=re.M))
        found.append(ProbeVariant(path.parts[-3], path.parts[-2], path.stem, header["kind"],
                                  header["probe"].strip(), header["feedback"].strip(), text))
    return found


VARIANTS = probe_variants()


def own_results(variant: ProbeVariant, seed: int) -> list:
    env = namespace(with_answer(solution(variant.assignment), variant.question, variant.source))
    checks = all_checks()[variant.assignment]
    return [run_check(env, variant.assignment, key, seed) for key, c in checks.items()
            if c.question == variant.question]


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.id for v in VARIANTS])
def test_probe_variant(variant):
    assert variant.kind in ("wrong", "correct")
    for seed in SEEDS:
        results = own_results(variant, seed)
        failing = [r for r in results if not r.passed]
        if variant.kind == "correct":  # full marks, and no diagnosis on any result
            assert not failing, f"seed {seed}: {[r.message for r in failing]}"
            assert all(r.misconception is None for r in results), [r.message for r in results]
            continue
        assert failing, f"seed {seed}: a wrong variant passed every check of its question"
        if variant.probe == "none":  # the fallback: what differed and what was tried, no cause
            for r in failing:
                assert r.misconception is None, (r.misconception, r.message)
                assert variant.feedback in r.message, r.message
                assert not any(g in r.message for g in GUESSES), r.message
                assert not any(w in r.message for w in ("probably", "likely", "must be")), r.message
                assert r.evidence.probes and r.evidence.probes[0]["tried"], r.evidence
            continue
        named = [r for r in failing if r.misconception == variant.probe]
        assert named, f"seed {seed}: {[(r.misconception, r.message) for r in failing]}"
        assert any(variant.feedback in r.message for r in named), [r.message for r in named]
        if variant.probe.startswith("probe."):  # the evidence holds the probe's calls
            assert all(r.evidence.probes and r.evidence.probes[0]["id"] == variant.probe
                       for r in named), [r.evidence.probes for r in named]


# --- the probes on their own: each kind on a made-up function, right and wrong --------------------


def _subject(fn, args=(2.5, -1.25), **extra):
    return probes.Subject(
        "f", fn, args, ("a", "b"), lambda a, b: (a * b, a + b),
        lambda got, exp: probes.numbers_close(probes.numbers_of(got), probes.numbers_of(exp)),
        probes.numbers_of, variations={0: lambda a: [a + 1.5], 1: lambda b: [b + 1.5]},
        **extra)


def _right(a, b):
    return (a * b, a + b)


def test_probe_kinds_name_what_they_establish():
    cases = {
        "probe.ignores-argument": lambda a, b: (a * 2.0, a + 2.0),
        "probe.nondeterministic": lambda a, b: (a * b + float(torch.rand(())), a + b),
        "probe.rounded": lambda a, b: (round(a * b, 2), round(a + b, 2)),
        "probe.scaled": lambda a, b: (-a * b, -(a + b)),
    }
    for expected, fn in cases.items():
        found = probes.diagnose(_subject(fn, (2.345, -1.2521)), fn(2.345, -1.2521))
        assert found is not None and found.id == expected, (expected, found)
        assert found.calls, found


def test_history_and_input_class_probes():
    seen = []

    def growing(a, b):
        seen.append(1)
        return (a * b + len(seen), a + b)

    found = probes.diagnose(_subject(growing), growing(2.5, -1.25))
    assert found.id == "probe.depends-on-history", found

    def truncating(a, b):
        a, b = int(a), int(b)
        return (a * b, a + b)

    def classes(args):
        a, b = args
        return [probes.InputClass("non-integer", (float(round(a)), float(round(b))),
                                  "Is something truncating them?")]

    found = probes.diagnose(_subject(truncating, classes=classes), truncating(2.5, -1.25))
    assert found.id == "probe.input-class.non-integer", found
    assert "wrong for non-integer inputs" in found.message


def test_state_on_objects_and_side_effects():
    def nudging(t):
        t.add_(1.0)
        return t.sum().item()

    subject = probes.Subject("g", nudging, (torch.ones(3),), ("t",),
                             lambda t: float(t.sum()), lambda g, e: abs(g - e) < 1e-9,
                             probes.numbers_of)
    found = probes.diagnose(subject, 6.0)
    assert found.id == "probe.state-on-objects" and "the values of t changed" in found.message

    net = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.1))
    before = probes.snapshot(net)
    net[0].weight.requires_grad_(False)
    net.eval()
    net[0].register_forward_hook(lambda *a: None)
    changed = probes.changes(before, net, "net")
    assert "net.0.weight.requires_grad became False" in changed
    assert "net was put in eval mode" in changed and "net.0 has +1 hooks" in changed
    assert probes.changes(probes.snapshot(net), net, "net") == []


def test_right_answers_and_unexplained_ones_get_no_cause():
    assert probes.diagnose(_subject(_right), _right(2.5, -1.25)) is None

    def odd(a, b):
        return (a * b + a * a / 7, a + b)

    subject = _subject(odd)
    assert probes.diagnose(subject, odd(2.5, -1.25)) is None
    assert "changing a" in subject.tried and "a constant factor" in subject.tried


def test_probe_calls_are_bounded():
    calls = []

    def counted(a, b):
        calls.append(1)
        return (a * b + len(calls) % 2, a + b)

    subject = _subject(counted)
    subject.calls_left = 3
    probes.diagnose(subject, counted(2.5, -1.25))
    assert len(calls) <= 1 + 3


def test_probe_calls_go_through_the_wall():
    """A probe's call is ``calling.call``: an exception is a result, never a crash."""
    def raising(a, b):
        raise ValueError("no")

    assert call(raising, "f", 1, 2)[1].misconception == "raised"
    assert probes.diagnose(_subject(raising), None) is None


# --- the same diagnoses in the sealed judge (the student's code in its own process) ------------

#: Those whose diagnosis depends on what crosses the wall: flags and hooks mirrored back, the
#: worker's generator seeded, strides sent, a raise reported, state kept in the worker.
SEALED = [v for v in VARIANTS if v.name in (
    "freezes-caller-net", "hook-left-on-net", "freezes-and-restores", "jittered-leaves",
    "numpy-port", "storage-order", "result-cached-by-track", "leaf-pooled-per-shape",
    "int-through-float64")]


@pytest.fixture(scope="module")
def exercises_zip(zips):
    """The suite's one build of the zip (conftest's ``assigned``), not an ``otter assign`` of
    this module's own on each worker."""
    return zips["autograd-exercises"]


@pytest.mark.slow
@pytest.mark.parametrize("variant", SEALED, ids=[v.id for v in SEALED])
def test_sealed_judge_gives_the_same_diagnosis(variant, exercises_zip, tmp_path):
    """Probe calls are remote calls there: the caller's objects are mirrored back (flags and
    hooks included) and the seeded repeat is seeded in the worker, so the ids must agree."""
    import nbformat

    from autograder.running.judge import uids
    from autograder.running.judge.core import judge
    from autograder.running.judge.tests_zip import load_tests
    from autograder.running.limits import Limits

    path = tmp_path / "variant.ipynb"
    nbformat.write(with_answer(solution(variant.assignment), variant.question, variant.source),
                   path)
    with uids.lease() as uid:
        doc = judge(path, path.name, variant.assignment, load_tests(exercises_zip), seed=0,
                    uid=uid, limits=Limits(call_timeout=20, submission_timeout=180))
    sealed = {(c.check, c.passed, c.misconception)
              for t in doc.questions[variant.question].tests for c in t.checks or ()}
    here = {(r.check, r.passed, r.misconception) for r in own_results(variant, 0)}
    assert sealed == here
    lost = {q: v.points for q, v in doc.questions.items()
            if q != variant.question and v.points != v.possible}
    assert not lost, lost


def test_diagnoses_count_in_the_class_report():
    """A probe's id travels like a named mistake: in the result document's checks, to the
    class report's count of misconceptions, with its calls in the evidence (JSON-able)."""
    import json

    from autograder.reporting.class_report import misconceptions, slim
    from autograder.running.resultdoc import Question, ResultDoc

    variant = next(v for v in VARIANTS if v.name == "y-from-lesson")
    checks = [r.to_dict() for r in own_results(variant, 0)]
    json.dumps(checks)  # the evidence (probe calls included) is plain data
    doc = slim(ResultDoc.graded("x.ipynb", {variant.question: Question.from_dict(
        {"points": 0.0, "possible": 1.0, "tests": [{"name": "t", "checks": checks}]})},
        assignment=variant.assignment, seed=0))
    assert ("q3_multipath: probe.ignores-argument", 2) in misconceptions([doc, doc])


def test_an_answer_that_is_nan_again_is_the_same_answer():
    """NaN twice (or inf twice) is one answer given twice: never ``depends-on-history``."""
    assert probes.numbers_close([float("nan"), float("inf"), 1.0], [float("nan"), float("inf"), 1.0])
    assert not probes.numbers_close([float("nan")], [1.0])
    assert not probes.numbers_close([float("inf")], [float("-inf")])

    def nan_on_negatives(a, b):  # a log of a negative argument: NaN, the same on every call
        return (a * b, float(torch.exp(torch.log(torch.tensor(b))) + a))

    found = probes.diagnose(_subject(nan_on_negatives), nan_on_negatives(2.5, -1.25))
    assert found is None or found.id != "probe.depends-on-history", found
