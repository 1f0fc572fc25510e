"""The one rule for a submission's name: its text (the ``file`` column, documents, feedback,
reports, gradebooks), its bytes (seeds, shard hashes, digests) and the files named after it.

A file name on Linux is bytes, not text: ``unzip`` of an archive made on Windows leaves
Latin-1 bytes (``caf\\xe9-hw.ipynb``) that Python hands over surrogate-escaped, and any byte
but ``/`` and NUL may be in it (a newline, an escape sequence). ``text`` turns the name found
on disk into text that is printable and says which bytes were odd, one to one (``raw`` undoes
it): every part of the grader after ``find`` knows the submission by that text only.

``name_bytes`` is the one way a name becomes bytes for hashing (``os.fsencode``: the bytes on
disk; a name holding a lone surrogate that fsencode refuses is encoded ``surrogatepass``
rather than raising), and ``out_path`` the one way a file named after a submission (its result
document, its feedback) is named: every part within ``NAME_MAX`` bytes, a long part cut and
told apart from every other by a digest of the whole. ``printable`` is the rule for any text
the grader prints (a path staff gave, a message holding a name): no control character reaches
the terminal.

Hand-written, not a library: Python's codecs either refuse these names (``utf-8``), are not
reversible (``backslashreplace`` leaves a literal backslash ambiguous) or escape all that is
not ASCII (``unicode_escape``, which would turn every accented name into escapes).
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from pathlib import Path

#: The longest file name (one path part) Linux file systems take, in bytes.
NAME_MAX = 255
#: Bytes of the digest that tells cut names apart (hex characters).
_DIGEST = 16
_ESCAPE = re.compile(r"\\(\\|x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})")


def name_bytes(name: str) -> bytes:
    """The bytes of ``name`` for a hash or a seed: the bytes on disk for a name as found
    (``os.fsencode``), UTF-8 for text; never raises."""
    try:
        return os.fsencode(name)
    except UnicodeEncodeError:  # a lone surrogate no file name could have produced
        return name.encode("utf-8", "surrogatepass")


def text(name: str) -> str:
    """``name`` (as ``os`` returned it, surrogate-escaped) as printable text, one to one.

    Kept as is: every printable character, any script, and ``/``. Escaped: a byte that is not
    UTF-8 as ``\\xNN`` (NN >= 80), an ASCII control character as ``\\xNN`` (NN < 20, 7f),
    any other unprintable character (line separators, bidirectional overrides) as ``\\uNNNN``
    or ``\\UNNNNNNNN``, and the backslash itself as ``\\\\`` (so that the escapes are
    unambiguous). ``text`` of an ordinary name is the name.
    """
    out = []
    for ch in name:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif 0xDC80 <= code <= 0xDCFF:  # surrogateescape's stand-in for byte code - 0xDC00
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch.isprintable():
            out.append(ch)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        else:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return "".join(out)


# C0 and C1 control characters and DEL: an ANSI escape in a file name (``\x1b[2J``) would
# otherwise clear or recolour the staff's terminal, a CR overwrite the line before it. By hand:
# rich's own strip_control_codes removes only BEL, BS, VT, FF and CR, and lets ESC and C1 through
# Surrogates too: a path staff gave that is not UTF-8 (``caf\xe9/``) cannot be printed as is.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def printable(message: str, *, lines: bool = True) -> str:
    """``message`` with every control character shown as an escape (``\\x1b``), never sent to the
    terminal, and a byte that is not UTF-8 as ``names.text`` shows it (``\\xe9``); with
    ``lines`` its line breaks stay line breaks (our own messages use them)."""
    def shown(match: re.Match) -> str:
        if "\udc80" <= match.group() <= "\udcff":
            return text(match.group())
        return repr(match.group())[1:-1]

    if lines:
        return "\n".join(_CONTROL.sub(shown, line) for line in str(message).split("\n"))
    return _CONTROL.sub(shown, str(message))


# What ``visible`` escapes: every character of Unicode's categories Cc (controls: ESC, CR, BEL,
# NUL, the C1 block), Cf (format: the bidirectional overrides and isolates U+202A-202E and
# U+2066-2069, the zero-width U+200B-200F, U+2060, U+FEFF), Cs (lone surrogates), Zl and Zp
# (U+2028, U+2029), but the line break and the tab. Listed by hand (a regex built from
# ``unicodedata`` would walk 1.1 million code points at import); tests/test_names.py checks the
# list against the running Python's Unicode database.
_HIDING = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891"
    "\u08e2\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff"
    "\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]")


def visible(message: str) -> str:
    """``message`` as a platform page may show it: every character that could move, hide or
    reorder what the reader sees (a carriage return that rewrites the line, an ANSI escape, a
    right-to-left override, a zero-width space) as an escape (``\\r``, ``\\x1b``,
    ``\\u202e``), line breaks and tabs kept. What a submission printed or raised cannot then
    pass for the grader's own words."""
    def shown(match: re.Match) -> str:
        if "\udc80" <= match.group() <= "\udcff":
            return text(match.group())
        return repr(match.group())[1:-1]

    return _HIDING.sub(shown, str(message))


def visible_json(value: object) -> object:
    """``value`` (a JSON document: dicts, lists, strings, numbers) with every string
    ``visible``; keys are the platform's and left as they are."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, list):
        return [visible_json(v) for v in value]
    if isinstance(value, dict):
        return {k: visible_json(v) for k, v in value.items()}
    return value


def raw(shown: str) -> str:
    """The name ``text`` was given (surrogate-escaped, as ``os`` takes it)."""
    def one(match: re.Match) -> str:
        escape = match[1]
        if escape == "\\":
            return "\\"
        code = int(escape[1:], 16)
        return chr(0xDC00 + code) if escape[0] == "x" and code >= 0x80 else chr(code)

    return _ESCAPE.sub(one, shown)


def folded(name: str) -> str:
    """What ``name`` looks like to a reader: NFC-normalised (``café`` typed on a Mac, NFD,
    and on Linux, NFC, are two files that print alike)."""
    return unicodedata.normalize("NFC", name)


def look_alike(names: list[str]) -> list[list[str]]:
    """Groups of two or more ``names`` that differ only in Unicode form (``folded``)."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(folded(name), []).append(name)
    return [sorted(g) for _, g in sorted(groups.items()) if len(g) > 1]


#: What every file named after a submission ends in (its result document, its feedback pages):
#: a folder part ending in one of these is digested (``fit``), so that no submission's file is
#: ever another's folder (``victim.ipynb.json/`` beside ``victim.ipynb``).
OUT_SUFFIXES = (".json", ".md", ".html")
#: The mark a cut name ends in: ``~`` and 16 hex digits. A name that ends in it uncut is
#: digested as well, so that a cut name never equals another name kept as is.
_CUT = re.compile(r"~[0-9a-f]{16}\Z")


def _mark(part: str) -> str:
    """``~`` and 16 hex digits of ``part``'s SHA-256: what tells a cut name apart."""
    return "~" + hashlib.sha256(name_bytes(part)).hexdigest()[:_DIGEST]


def fit(part: str, suffix: str = "", *, folder: bool = False) -> str:
    """``part + suffix`` as one file name within ``NAME_MAX`` bytes: as is when it fits, else
    ``part`` cut (at a character) + ``~`` + a digest of the whole ``part`` + ``suffix``.

    One to one (for one ``suffix``): a part that already ends like a cut one (``~`` and 16
    hex digits) is digested too, so a part kept as is never ends in that mark and a digested
    one always does. With ``folder`` (a folder part of a path), a part ending in one of
    ``OUT_SUFFIXES`` is digested too: a folder never has a name a file of ours could have.
    """
    whole = part + suffix
    if (len(name_bytes(whole)) <= NAME_MAX and not _CUT.search(part)
            and not (folder and part.endswith(OUT_SUFFIXES))):
        return whole
    tag = _mark(part) + suffix
    room = NAME_MAX - len(name_bytes(tag))
    if room < 0:
        raise ValueError(f"suffix {suffix[:40]!r}... leaves no room for a name")
    cut = name_bytes(part)[:room].decode("utf-8", "ignore")  # never half a character
    while len(name_bytes(cut)) > room:  # a surrogate-escaped name: shorter in bytes than chars
        cut = cut[:-1]
    return cut + tag


def relative(name: str, suffix: str = "", strip: str = "") -> str:
    """``name`` (a relative path, parts joined by ``/``) with ``strip`` taken off the end of
    its last part (``.ipynb`` for a feedback page) and ``suffix`` put on, every part within
    ``NAME_MAX`` bytes (``fit``; folder parts never end like a file of ours). A folder's row
    (``sec2/``, ``./``: a folder that could not be listed) is named inside it:
    ``sec2/<suffix>``.

    One to one over a run's names (for one ``suffix``), and no name's path is a folder of
    another's: ``find``'s names are distinct, end in ``.ipynb`` (or are a folder's row), and
    ``fit`` is one to one and never gives a folder a name ending in a suffix of ours.

    Raises:
        ValueError: ``name`` is empty, absolute or has an empty, ``.`` or ``..`` part (never a
            name ``find`` gives: such a name comes from a document or manifest, not a folder).
    """
    folder = name.endswith("/")
    body = name[:-1] if folder else name
    parts = [] if folder and body == "." else body.split("/")
    if (not parts and not folder) or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"{text(name)[:200]!r} is not a relative file name")
    last = "" if folder else parts.pop()
    end = fit(last, suffix)
    if strip and not folder and last.endswith(strip):
        stem = last[: -len(strip)]
        # ``.ipynb``, ``..ipynb``: a stem that names no file (or the folder's row) gets the
        # mark of the whole name, which no stem kept as is ends in
        end = _mark(last) + suffix if stem in ("", ".", "..") else fit(stem, suffix)
    return "/".join([fit(p, folder=True) for p in parts] + [end])


def out_path(root: Path, name: str, suffix: str, strip: str = "") -> Path:
    """The file named after submission ``name`` under ``root`` (``results/<name>.json``,
    ``feedback/<stem>.html``): its folders mirrored, every part within ``NAME_MAX``
    (``relative``). Every path built from a submission's name is built here."""
    return root / relative(name, suffix, strip)
