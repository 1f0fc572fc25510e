"""What ``autograder grade`` shows while it works: a progress bar on a terminal, the plain
per-submission lines elsewhere (logs, CI), and with ``--json`` one JSON summary on stdout."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from typing import Callable, Iterator, TextIO

from ..names import printable


class Display:
    """Plain lines (not a TTY): one per submission, as before; a text summary at the end.

    Args:
        stream: where human-readable lines go (stderr in ``--json`` mode, keeping stdout clean).
        machine: print the final summary as one JSON object on stdout instead of a table.
    """

    def __init__(self, stream: TextIO, machine: bool = False):
        self.stream, self.machine = stream, machine

    def say(self, text: str) -> None:
        print(printable(text), file=self.stream, flush=True)

    @contextmanager
    def group(self, assignment: str, total: int,
              in_flight: Callable[[], int] | None = None) -> Iterator[Callable[[str], None]]:
        """Yield ``advance(line)``, called once per finished submission; ``in_flight()``
        says how many are being graded right now."""
        done = 0

        def advance(line: str) -> None:
            nonlocal done
            done += 1
            self.say(f"  [{assignment} {done}/{total}] {printable(line, lines=False)}")

        yield advance

    def finish(self, summary: dict) -> None:
        """The end of the run: a table for people, or the JSON summary for machines."""
        if self.machine:
            print(json.dumps(summary, indent=2, sort_keys=True), flush=True)
            return
        for line in summary_lines(summary) + cut_lines(summary):
            self.say(line)


class RichDisplay(Display):
    """A terminal: a progress bar per assignment with counts and ETA, a table at the end."""

    def __init__(self, stream: TextIO):
        from rich.console import Console

        super().__init__(stream)
        self.console = Console(file=stream)

    def say(self, text: str) -> None:
        self.console.print(printable(text), markup=False, highlight=False)

    @contextmanager
    def group(self, assignment: str, total: int,
              in_flight: Callable[[], int] | None = None) -> Iterator[Callable[[str], None]]:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), InFlightEta(in_flight or (lambda: 0)),
                      console=self.console, transient=False) as bar:
            task = bar.add_task(assignment, total=total)

            def advance(line: str) -> None:
                bar.console.print(f"  {printable(line, lines=False)}", markup=False,
                                  highlight=False)
                bar.advance(task)

            yield advance

    def finish(self, summary: dict) -> None:
        from rich.markup import escape
        from rich.table import Table

        # no borders: the table fits 80 columns with both assignments' names in full
        table = Table(title=f"seed {summary['seed']}, {summary['runner']} runner", box=None,
                      padding=(0, 1), pad_edge=False)
        for col in SUMMARY_COLUMNS:
            table.add_column(col, justify="left" if col == "assignment" else "right")
        for row in summary_rows(summary):  # table cells are rich markup: escaped
            table.add_row(*(escape(printable(cell)) for cell in row))
        self.console.print(table)
        for line in cut_lines(summary):
            self.say(line)


def eta_text(done: int, total: int, running: int, elapsed: float, since_last: float) -> str:
    """The ETA column: submissions in flight and the time left.

    Rich's own column extrapolates from the time elapsed only, so while one submission runs
    into its time limit it shows ``0:00:02`` for minutes. Here: the rate at which submissions
    finished up to the last one that did, for those left, minus the time since; past that,
    the honest answer: waiting on the ones in flight.
    """
    left = total - done
    if left <= 0:
        return "done"
    flight = f"{running} in flight" if running else "starting"
    finished_by = elapsed - since_last
    if done == 0 or finished_by <= 0:
        return f"{flight}, ETA -:--:--"
    remaining = left * finished_by / done - since_last
    if remaining <= 0:
        return f"{flight}, ETA: waiting on them"
    minutes, seconds = divmod(int(remaining + 0.5), 60)
    return f"{flight}, ETA {minutes // 60}:{minutes % 60:02d}:{seconds:02d}"


class InFlightEta:
    """A rich progress column showing ``eta_text`` (built lazily: rich is imported late)."""

    def __new__(cls, in_flight: Callable[[], int]):
        import time

        from rich.progress import ProgressColumn
        from rich.text import Text

        class Column(ProgressColumn):
            max_refresh = 0.5

            def __init__(self):
                super().__init__()
                self.last_done, self.last_change = 0, time.monotonic()

            def render(self, task) -> Text:
                done = int(task.completed)
                if done != self.last_done:
                    self.last_done, self.last_change = done, time.monotonic()
                return Text(eta_text(done, int(task.total or 0), in_flight(),
                                     task.elapsed or 0.0, time.monotonic() - self.last_change))

        return Column()


def choose(machine: bool) -> Display:
    """The display for this process: JSON for machines, a bar on a TTY, plain lines otherwise."""
    if machine:
        return Display(sys.stderr, machine=True)
    if sys.stdout.isatty():
        return RichDisplay(sys.stdout)
    return Display(sys.stdout)


#: Short headers: the table fits 80 columns (rows: "autograd-exercises" and 6 numbers).
SUMMARY_COLUMNS = ["assignment", "total", "graded", "skipped", "problems", "errors", "mean",
                   "of"]


def summary_rows(summary: dict) -> list[list[str]]:
    rows = []
    for name, a in sorted(summary["assignments"].items()):
        rows.append([name, str(a["submissions"]), str(a["graded_now"]), str(a["skipped"]),
                     str(len(a["student_problems"])), str(len(a["grader_errors"])),
                     f"{a['mean']:.2f}", f"{a['possible']:g}"])
    return rows


def cut_lines(summary: dict) -> list[str]:
    """One line per assignment whose submissions the whole-submission time limit cut short
    (their points are lost to time, not to wrong answers: staff may raise the limit)."""
    return [f"  {name}: {len(a['timed_out'])} timed out (the whole submission's time limit; "
            f"--submission-timeout): {', '.join(a['timed_out'][:10])}"
            + (f" and {len(a['timed_out']) - 10} more" if len(a["timed_out"]) > 10 else "")
            for name, a in sorted(summary["assignments"].items()) if a.get("timed_out")]


def summary_lines(summary: dict) -> list[str]:
    """The summary as fixed-width text lines."""
    rows = [SUMMARY_COLUMNS, *summary_rows(summary)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(SUMMARY_COLUMNS))]
    return ["summary:"] + ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                           for r in rows]
