"""The share of wrong variants whose failing checks name a cause (issue 16).

Grades each variant under ``tests/files/probe_variants/`` (or ``--variants``) on its own
question, in-process, with the seeds given, and prints one row per variant: the misconception
ids its failing checks carry. A wrong variant counts as *named* when a failing check carries an
id other than ``raised`` / ``worker-lost`` (those say that the code failed, not why). Run it with
``PYTHONPATH`` pointing at another checkout's ``autograder`` to measure that one::

    .venv/bin/python benchmarks/probe_share.py --seeds 0,1
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOT_A_CAUSE = {None, "raised", "worker-lost"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", type=Path, default=ROOT / "tests/files/probe_variants")
    parser.add_argument("--seeds", default="0,1")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    from autograder.checks import all_checks
    from autograder.harness import run_check
    from notebooks import namespace, solution, with_answer  # noqa: E402 (the tests' helpers)

    seeds = [int(s) for s in args.seeds.split(",")]
    wrong = named = 0
    for path in sorted(args.variants.glob("*/*/*.py")):
        text = path.read_text(encoding="utf-8")
        kind = re.search(r"^# kind: (\w+)", text, flags=re.M).group(1)
        assignment, question = path.parts[-3], path.parts[-2]
        env = namespace(with_answer(solution(assignment), question, text))
        ids = set()
        for seed in seeds:
            for key, check in all_checks()[assignment].items():
                if check.question == question:
                    result = run_check(env, assignment, key, seed)
                    if not result.passed:
                        ids.add(result.misconception)
        if kind == "wrong":
            wrong += 1
            named += bool(ids - NOT_A_CAUSE)
        shown = ", ".join(sorted(str(i) for i in ids)) or "-"
        print(f"| {question}/{path.stem} | {kind} | {shown} |")
    print(f"\nwrong variants with a named cause: {named} of {wrong}")


if __name__ == "__main__":
    main()
