"""Every submission's feedback files, ``OUT/<a>/feedback/<name>.md`` and ``.html``, written
from its result document (``feedback.build``, capped to ``MAX_FEEDBACK_BYTES``), and nothing
else left there."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..running.batch.stale import move_aside
from ..running.files import write_atomic
from ..running.names import out_path
from ..running.outputs.results import iter_results
from .feedback import build, render_html, render_markdown, with_written

#: The most one feedback file may take; over it, the notebook's cell errors are left out.
MAX_FEEDBACK_BYTES = 1 << 20


class FeedbackError(OSError):
    """Some submissions' feedback could not be written (one line naming them); every other
    submission's was."""


def write_all(folder: Path, detail: str = "full",
              written_scores: dict[str, list[dict]] | None = None) -> list[Path]:
    """Write ``folder/feedback/<name>.md`` and ``.html`` for every result document, and move
    every other file there to ``folder/stale/<UTC time>/feedback/`` (an earlier run's feedback
    for a file renamed or removed since, or a note staff kept there: red-team rt-s3's was
    deleted).

    Args:
        folder: ``OUT/<assignment>``.
        detail: how much hidden tests' messages show (``redaction.DETAIL``).
        written_scores: file -> its written questions' scores (``with_written``).

    Returns:
        The Markdown files written.

    Raises:
        FeedbackError: after every other file is written, when some could not be.
    """
    written, failed = [], []
    root = folder / "feedback"
    for doc in iter_results(folder):
        fb = with_written(build(doc, detail), (written_scores or {}).get(doc.file, []))
        md, html = render_markdown(fb), render_html(fb)
        if max(len(md.encode()), len(html.encode())) > MAX_FEEDBACK_BYTES:
            # the document is capped already (results.capped); escaping can still grow it
            fb = replace(fb, cells=[], cut=[*fb.cut, (
                f"the notebook cells' errors were left out to keep this file under "
                f"{MAX_FEEDBACK_BYTES // 1024} KB")])
            md, html = render_markdown(fb), render_html(fb)
        try:  # one file the file system refuses never costs the others their feedback
            for suffix, body in ((".md", md), (".html", html)):
                written.append(feedback_path(root, fb.file, suffix))
                write_atomic(written[-1], body)
        except (OSError, ValueError) as exc:
            failed.append(f"{fb.file} ({type(exc).__name__}: {exc})")
    move_aside(folder, set(written), "feedback")
    if failed:
        raise FeedbackError(f"{folder.name}: feedback not written for {len(failed)} "
                            f"submission(s): {'; '.join(failed)[:1000]}")
    return [p for p in written if p.suffix == ".md"]


def feedback_path(root: Path, file: str, suffix: str) -> Path:
    """``root/<file without .ipynb><suffix>``, every part within NAME_MAX and one to one over
    a run's files (``names.out_path``: the one rule, also the class report's links)."""
    return out_path(root, file, suffix, strip=".ipynb")
