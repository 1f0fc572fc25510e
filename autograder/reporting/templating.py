"""The Jinja environment every page of the reports renders with (feedback, the class report,
the written answers' grading pages): the templates beside this module, and the filters that
keep what a message holds from being read as markup."""

from __future__ import annotations

import re
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

TEMPLATES = Path(__file__).parent / "templates"


def _md(text: str) -> str:
    """Escape the Markdown that messages can hold by accident (``2*x``, ``<cell 8>``) or on
    purpose: no raw HTML or autolink (``<``), no link, image or link definition (every one
    needs ``](``, ``][`` or ``]:``), one line (a line break could start a heading or a block)."""
    text = " ".join(str(text).splitlines())
    for ch in "\\`*<":
        text = text.replace(ch, "\\" + ch)
    return re.sub(r"\](?=[(\[:])", r"\\]", text)


def _fence(text: str) -> str:
    """A code fence that ``text`` cannot close: longer than any run of backticks in it."""
    longest = max((len(run) for run in re.findall(r"`+", str(text))), default=0)
    return "`" * max(3, longest + 1)


def _capitalize_first(text: str) -> str:
    """``"the cell defining f"`` -> ``"The cell defining f"`` (the rest untouched, unlike
    Jinja's ``capitalize``, which lowercases it)."""
    return text[:1].upper() + text[1:]


def _num(x: float) -> str:
    return f"{x:g}"


def environment(autoescape: bool) -> Environment:
    """The Jinja environment for the templates beside this module."""
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=autoescape,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      keep_trailing_newline=True)
    env.filters.update(md=_md, num=_num, fence=_fence, capitalize_first=_capitalize_first,
                       breakable=_breakable)
    return env


def _breakable(text) -> Markup:
    """``text`` escaped, where a line may break only after ``_`` or ``/``: a column header
    (``total_points_earned``, ``q1_accumulation``) wraps between its words, never inside one."""
    return Markup("<wbr>").join(re.split(r"(?<=[_/])", str(text)))
