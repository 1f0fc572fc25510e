"""The cells of every CSV of ours: text no spreadsheet evaluates, read back exactly."""

from __future__ import annotations

import csv
import io
import re

#: What a spreadsheet takes for the start of a formula (OWASP's CSV injection list), and the
#: quote that neutralises it (also doubled before a leading quote, so that reading back is exact).
#: By hand, not a package (defusedcsv): a few lines, and our reports must read the CSV back to
#: the exact names, which needs the reversible rule below.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_safe(cell) -> str:
    """``cell`` as CSV text no spreadsheet evaluates: text starting like a formula
    (``=cmd|...``, ``+``, ``-``, ``@``, tab, CR) or with a quote gets a leading ``'``;
    numbers (``-0.5``) stay numbers."""
    text = str(cell)
    if text.startswith((*FORMULA_START, QUOTE)) and not _NUMBER.fullmatch(text):
        return QUOTE + text
    return text


def from_spreadsheet(text: str) -> str:
    """The cell ``spreadsheet_safe`` was given (for reading our CSVs back)."""
    return text[1:] if text.startswith(QUOTE) else text


def safe_row(cells: list) -> list[str]:
    return [spreadsheet_safe(c) for c in cells]


def csv_text(header: list[str], rows: list[list[str]]) -> str:
    """A small CSV of ours, every cell spreadsheet-safe (``safe_row``)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(safe_row(list(row)) for row in rows)
    return buf.getvalue()
