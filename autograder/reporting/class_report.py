"""One self-contained HTML class report per assignment, its figures also written as PNGs.

Grades come from ``final_grades.csv`` (the official numbers, so the page and the CSV cannot
disagree); pass rates, misconceptions and problems from the result documents; times from
``timings.json`` (kept out of the results on purpose: those are deterministic).
"""

from __future__ import annotations

import base64
from collections import Counter
from pathlib import Path

from ..running.files import write_atomic
from ..running.progress import printable
from . import plots
from .documents import Grades, iter_results, load_grades, load_timings
from .feedback import environment

GRADED = "graded"


def pass_rates(grades: Grades) -> list[dict]:
    """Per question: share of submissions with full marks, and mean points."""
    rates = []
    for q in grades.questions:
        earned = [float(r[q]) for r in grades.rows]
        full = sum(e >= grades.possible[q] for e in earned)
        rates.append({"question": q, "possible": grades.possible[q],
                      "full": full, "rate": full / len(earned) if earned else 0.0,
                      "mean": sum(earned) / len(earned) if earned else 0.0})
    return rates


def misconceptions(docs: list[dict]) -> list[tuple[str, int]]:
    """``question: misconception`` -> how many submissions showed it, most frequent first."""
    counts: Counter[str] = Counter()
    for doc in docs:
        seen = {f"{q}: {c['misconception']}"
                for q, v in doc.get("questions", {}).items()
                for t in v.get("tests", []) for c in t.get("checks", [])
                if c.get("misconception")}
        counts.update(seen)
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def troubles(grades: Grades, docs: list[dict]) -> list[dict]:
    """Submissions not cleanly graded: a status other than graded, problems, grader faults."""
    by_file = {d["file"]: d for d in docs}
    found = []
    for row in grades.rows:
        doc = by_file.get(row["file"], {})
        grader = [c["check"] for v in doc.get("questions", {}).values()
                  for t in v.get("tests", []) for c in t.get("checks", [])
                  if c.get("fault") == "grader"]
        notes = list(doc.get("problems", [])) + [f"grader fault in {c}" for c in grader]
        if row["grading_status"] != "Completed" or notes or doc.get("status", GRADED) != GRADED:
            found.append({"file": row["file"], "status": doc.get("status", "?"),
                          "detail": "; ".join(notes) or row["grading_status"]})
    return found


def figures(grades: Grades, rates: list[dict], common: list[tuple[str, int]],
            timings: dict[str, float]) -> dict[str, bytes]:
    """File name -> PNG bytes for each figure of the report."""
    files = [r["file"] for r in grades.rows]
    return {
        "score_distribution.png": plots.score_distribution(
            [float(r["percent_correct"]) for r in grades.rows]),
        "pass_rate.png": plots.horizontal_bars(
            [r["question"] for r in rates], [100 * r["rate"] for r in rates],
            title="Submissions with full marks, per question", xlabel="%", xmax=100),
        "misconceptions.png": plots.horizontal_bars(
            [k for k, _ in common], [n for _, n in common], color="#c44e52",
            title="Named misconceptions", xlabel="submissions"),
        "grading_time.png": plots.horizontal_bars(  # names drawn without control characters
            [printable(f, lines=False) for f in files if f in timings],
            [timings[f] for f in files if f in timings],
            color="#55a868", title="Grading time per submission", xlabel="seconds"),
    }


def write(folder: Path) -> Path:
    """Write ``folder/report/class_report.html`` and its PNGs; return the HTML's path.

    Args:
        folder: ``OUT/<assignment>``, holding ``final_grades.csv`` and ``results/``.
    """
    grades, timings = load_grades(folder), load_timings(folder)
    docs = [_slim(d) for d in iter_results(folder)]  # never a class of full documents
    rates, common = pass_rates(grades), misconceptions(docs)
    pngs = figures(grades, rates, common, timings)
    report = folder / "report"
    report.mkdir(parents=True, exist_ok=True)
    for name, data in pngs.items():
        (report / name).write_bytes(data)
    images = {n: "data:image/png;base64," + base64.b64encode(d).decode() for n, d in pngs.items()}
    html = environment(True).get_template("class_report.html.j2").render(
        assignment=folder.name, grades=grades, rates=rates, common=common,
        troubles=troubles(grades, docs), timings=timings, images=images,
        mean=_mean([float(r["total_points_earned"]) for r in grades.rows]),
        possible=sum(grades.possible.values()))
    write_atomic(report / "class_report.html", html)
    return report / "class_report.html"


def _slim(doc: dict) -> dict:
    """What this report reads of a result document: status, problems, and per check its
    name, misconception and fault (no messages, evidence or notebook cells)."""
    keep = ("check", "misconception", "fault")
    return {"file": doc["file"], "status": doc.get("status", GRADED),
            "problems": list(doc.get("problems", [])),
            "questions": {q: {"tests": [{"checks": [{k: c[k] for k in keep if k in c}
                                                    for c in t.get("checks", [])]}
                                        for t in v.get("tests", [])]}
                          for q, v in doc.get("questions", {}).items()}}


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0
