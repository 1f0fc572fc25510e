#!/usr/bin/env python3
"""Move ``autograder/running/`` into packages that show the flow, and rename the modules whose
names collided; rewrite every import and every reference to a moved module.

    python scripts/relayout.py            # from the repository root, on a clean checkout

It is a script, not a hand-made commit, so that it can be run again after other branches that
edit the same modules are merged: it only moves files (``git mv``), writes the new packages'
``__init__.py`` and rewrites module names; no module's own code changes. See docs/layout.md.

What it rewrites, in the tracked files under autograder/, tests/, docker/, benchmarks/, gpu/,
scripts/, docs/, the Makefile and the README (but not this script and docs/layout.md, whose
table names the old modules):

- Python imports, absolute and relative, parsed with ``ast``: ``from .judge import judge`` in a
  module that moves becomes ``from ..judge.core import judge``; ``from autograder.running import
  uids, zygote`` is split by where each module went (a renamed one keeps its old name with
  ``as``, so the code that uses it is unchanged);
- dotted names anywhere else (``python -m autograder.running.container_entry``, a
  ``monkeypatch`` target, a docstring, a hostile test notebook's
  ``sys.modules["autograder.worker.context"]``) and file paths
  (``autograder/running/sandbox.py``).

Not idempotent on purpose: every source must exist before anything moves, else it stops with
the list of what is missing (it was run already, or a module was renamed meanwhile). It ends
by importing every moved module with this Python.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

# old module -> new module (both under autograder.)
MOVES = {
    # the judge core: grade one notebook, its code in a confined worker
    "running.judge": "running.judge.core",
    "running.remote": "running.judge.remote",
    "running.worker_client": "running.judge.worker_client",
    "running.sandbox": "running.judge.sandbox",
    "running.cgroups": "running.judge.cgroups",
    "running.uids": "running.judge.uids",
    "running.tests_zip": "running.judge.tests_zip",
    "running.zygote": "running.judge.fork_client",
    # the runners: one interface, a registry, one module a runner
    "running.runner": "running.runners.base",
    "running.registry": "running.runners.registry",
    "running.sealed": "running.runners.sealed",
    "running.otter_run": "running.runners.otter",
    "running.docker_engine": "running.runners.docker_engine",
    "running.docker_runner": "running.runners.docker",
    "running.fork_runner": "running.runners.docker_fork",
    "running.pod_runner": "running.runners.pod",
    # the in-container entry points (``python -m``)
    "running.container_entry": "running.entry.container",
    "running.judge_service": "running.entry.judge_service",
    "running.zip_entry": "running.entry.run_autograder",
    "running.pod_entry": "running.entry.pod",
    "running.prairielearn_entry": "running.entry.prairielearn",
    # the batch: pick, grade, write the CSV, show progress
    "running.batch": "running.batch.folder",
    "running.selection": "running.batch.selection",
    "running.progress": "running.batch.progress",
    "running.grades_csv": "running.batch.grades_csv",
    "running.roster": "running.batch.roster",
    "running.shards": "running.batch.shards",
    "running.merge": "running.batch.merge",
    # the worker: one name per concept
    "worker.zygote": "worker.fork_server",
    "worker.context": "worker.arrangements",
}
MOVES = {f"autograder.{k}": f"autograder.{v}" for k, v in MOVES.items()}

PACKAGES = {
    "autograder/running/judge": "The judge core: grade one notebook whose code runs in a "
    "confined worker (``core.judge``), the worker's client and remote namespace, the sandbox "
    "and its cgroups, sandbox uids, the fork server's client, the test cases of an autograder "
    "zip.",
    "autograder/running/runners": "The runners: the ``Runner`` interface (``base``), every "
    "runner by name (``registry``), and one module a runner: ``sealed``, ``otter``, ``docker`` "
    "(``docker-gpu`` too), ``docker_fork`` and ``pod``, with what the Docker ones share "
    "(``docker_engine``).",
    "autograder/running/entry": "The in-container entry points, each run as ``python -m``: "
    "``container`` (one job of the ``docker`` runner), ``judge_service`` (the ``docker-fork`` "
    "judge), ``run_autograder`` (the Gradescope / ``otter grade`` zip), ``pod`` (one shard in "
    "a pod or batch job), ``prairielearn`` (PrairieLearn's external grader).",
    "autograder/running/batch": "The batch: ``folder.grade_folder`` grades a folder of "
    "submissions with a runner, ``selection`` picks what a partial run grades, "
    "``grades_csv`` writes ``final_grades.csv``, ``progress`` shows it, ``roster`` says "
    "whose a file is, ``shards`` and ``merge`` split a run and join it again.",
}
ROOTS = ("autograder", "tests", "docker", "benchmarks", "gpu", "scripts", "docs", "deploy")
FILES = ("Makefile", "README.md")
# the table of old and new names itself, and this script
SKIP = ("docs/layout.md", "scripts/relayout.py")
TEXT = (".py", ".ipynb", ".md", ".sh", ".txt", ".toml", ".cfg", ".yml", ".yaml", ".j2", ".json")


def path_of(module: str) -> Path:
    return Path(*module.split(".")).with_suffix(".py")


def package_of(path: Path) -> str:
    """The package a file's relative imports start from (its own, for ``__init__.py``)."""
    parts = list(path.with_suffix("").parts)
    return ".".join(parts[:-1])


def new_path(path: Path) -> Path:
    module = ".".join(path.with_suffix("").parts)
    return path_of(MOVES[module]) if module in MOVES else path


def absolute(package: str, level: int, module: str | None) -> str:
    base = package.split(".")
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, *([module] if module else [])])


def relative(package: str, target: str) -> str:
    """``target`` as a relative module name seen from ``package`` (``..judge.core``)."""
    here, there = package.split("."), target.split(".")
    common = 0
    while common < min(len(here), len(there)) and here[common] == there[common]:
        common += 1
    return "." * (len(here) - common + 1) + ".".join(there[common:])


def rewrite_imports(text: str, old: Path, new: Path) -> list[tuple[int, int, str]]:
    """Edits (start, end, replacement) of ``text`` (the file at ``old``, moving to ``new``)."""
    tree = ast.parse(text)
    offsets = [0]
    for line in text.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    old_pkg, new_pkg = package_of(old), package_of(new)
    edits = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        start = offsets[node.lineno - 1] + node.col_offset
        end = offsets[node.end_lineno - 1] + node.end_col_offset
        base = absolute(old_pkg, node.level, node.module) if node.level else node.module
        if not base or not base.startswith("autograder"):
            continue

        def spelled(target: str) -> str:
            return relative(new_pkg, target) if node.level else target

        moved = {a.name: MOVES[f"{base}.{a.name}"] for a in node.names
                 if f"{base}.{a.name}" in MOVES}
        if moved:  # ``from PACKAGE import module, ...``: one statement a destination
            groups: dict[str, list[str]] = {}
            for a in node.names:
                target = moved.get(a.name)
                where, name = (target.rsplit(".", 1) if target else (base, a.name))
                alias = a.asname or (a.name if name != a.name else None)
                groups.setdefault(where, []).append(f"{name} as {alias}" if alias else name)
            indent = " " * node.col_offset
            lines = [f"from {spelled(w)} import {', '.join(n)}" for w, n in groups.items()]
            edits.append((start, end, f"\n{indent}".join(lines)))
            continue
        target = MOVES.get(base, base)
        if spelled(target) != (("." * node.level) + (node.module or "") if node.level
                               else node.module):
            statement = text[start:end]
            match = re.match(r"from\s+(\.*[\w.]*)\s+import", statement)
            edits.append((start + match.start(1), start + match.end(1), spelled(target)))
    return sorted(edits)


def _names() -> dict[str, str]:
    """Every spelling of a moved module outside an import: dotted, as a path, as a path
    without the package's name (``running/sandbox.py`` in a layout table)."""
    names = {}
    for old, new in MOVES.items():
        names[old] = new
        old_path, new_path_ = str(path_of(old)), str(path_of(new))
        names[old_path] = new_path_
        names[old_path.split("/", 1)[1]] = new_path_.split("/", 1)[1]
    return names


NAMES = _names()
# one pass, longest first: a name written by one replacement is never replaced again
# (``autograder.running.zygote`` becomes ``autograder.running.judge.fork_client``, which the
# old ``autograder.running.judge`` must not then match)
# ``from autograder.x import a, b`` written in a string (code run with ``python -c``) is
# rewritten like a real import, absolute, one statement a destination joined with "; "
SPELLED = re.compile(r"(?P<stmt>\bfrom\s+(?P<base>autograder(?:\.\w+)*)\s+import\s+"
                     r"(?P<names>\w+(?:[ \t]*,[ \t]*\w+)*)\b(?![ \t]+as\b))"
                     r"|(?<![\w/.])(?P<name>"
                     + "|".join(re.escape(n) for n in sorted(NAMES, key=len, reverse=True))
                     + r")(?!\w)")


def _spelled(match: re.Match) -> str:
    if match.group("name"):
        return NAMES[match.group("name")]
    base = match.group("base")
    names = [n.strip() for n in match.group("names").split(",")]
    if not any(f"{base}.{n}" in MOVES for n in names):
        return f"from {MOVES.get(base, base)} import {match.group('names')}"
    groups: dict[str, list[str]] = {}
    for n in names:
        where, name = MOVES.get(f"{base}.{n}", f"{base}.{n}").rsplit(".", 1)
        groups.setdefault(where, []).append(f"{name} as {n}" if name != n else name)
    return "; ".join(f"from {w} import {', '.join(ns)}" for w, ns in groups.items())


def rewrite_text(text: str) -> str:
    """Dotted names, ``from ... import`` in strings and file paths of moved modules, outside
    the import statements."""
    return SPELLED.sub(_spelled, text)


def rewrite(old: Path, new: Path) -> str:
    """The text of the file at ``old`` as it must read at ``new``."""
    text = old.read_text(encoding="utf-8")
    edits = rewrite_imports(text, old, new) if old.suffix == ".py" else []
    out, at = [], 0
    for start, end, replacement in edits:
        out += [rewrite_text(text[at:start]), replacement]
        at = end
    out.append(rewrite_text(text[at:]))
    return "".join(out)


# every module imported in one process; a failure is one line: the module and its error
IMPORT_ALL = """
import importlib, sys
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception as exc:
        print(f"{name}: {type(exc).__name__}: {exc}")
"""


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def main() -> int:
    missing = [str(path_of(m)) for m in MOVES if not path_of(m).is_file()]
    taken = [str(path_of(m)) for m in MOVES.values() if path_of(m).exists()]
    if missing or taken:
        print("relayout: nothing moved: "
              + "; ".join(filter(None, [
                  f"missing sources: {', '.join(missing)}" if missing else "",
                  f"destinations exist: {', '.join(taken)}" if taken else ""]))
              + " (run already, or the layout changed since this script was written)",
              file=sys.stderr)
        return 1
    tracked = [Path(p) for p in git("ls-files", *ROOTS, *FILES).splitlines()]
    files = [p for p in tracked if p.suffix in TEXT or p.name in FILES or p.name == "Dockerfile"
             or p.name.startswith("Dockerfile")]
    files = [p for p in files if p.as_posix() not in SKIP and p.is_file()]
    texts = {new_path(p): rewrite(p, new_path(p)) for p in files}  # all read before moving
    for package in PACKAGES:
        Path(package).mkdir(parents=True, exist_ok=True)
    for old, new in MOVES.items():
        git("mv", str(path_of(old)), str(path_of(new)))
    long = []
    for path, text in texts.items():
        before = path.read_text(encoding="utf-8")
        if before != text:
            path.write_text(text, encoding="utf-8")
            old_lines = set(before.splitlines())
            long += [f"{path}:{n}" for n, line in enumerate(text.splitlines(), 1)
                     if len(line) > 100 and line not in old_lines]
    for package, doc in PACKAGES.items():
        init = Path(package) / "__init__.py"
        init.write_text('"""' + textwrap.fill(doc, 96) + '\n"""\n', encoding="utf-8")
        git("add", str(init))
    git("add", "-u")
    modules = [*MOVES.values(), *(p.replace("/", ".") for p in PACKAGES)]
    proc = subprocess.run([sys.executable, "-c", IMPORT_ALL, *modules], capture_output=True,
                          text=True)
    failed = proc.stdout.splitlines() + ([proc.stderr.strip()] if proc.returncode else [])
    if long:  # the longer names pushed them over: worth rewrapping by hand, in a later commit
        print(f"relayout: note: {len(long)} rewritten lines are over 100 characters: "
              f"{', '.join(long)}")
    for line in failed:
        print(f"relayout: import {line}", file=sys.stderr)
    print(f"relayout: moved {len(MOVES)} modules; "
          f"{'every moved module imports' if not failed else f'{len(failed)} do not import'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
