"""A submission's name never stops a batch or mixes two students up (``running/names.py``).

File names are bytes: not UTF-8 (``unzip`` of a Windows archive), up to NAME_MAX (255) bytes,
control characters, Unicode forms that print alike (NFC ``café`` and NFD ``café``), names
whose Canvas ids collide. Fast properties over the name functions and over real folders of
such files (``find``, the documents, the feedback), then the real ``autograder grade`` CLI:
hypothesis-drawn names in runs where every file is rejected (no notebook runs, seconds each),
and one sealed run grading the solution under every odd name at once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.checks.seeding import submission_seed
from autograder.reporting import exports, feedback_files
from autograder.running.batch.shards import listing_digest, shard_of
from autograder.running.names import NAME_MAX, fit, name_bytes, out_path, raw, relative, text
from autograder.running.outputs.final_grades import Grades
from autograder.running.outputs.final_grades import read as read_grades
from autograder.running.outputs.results import iter_results
from autograder.running.resultdoc import ResultDoc
from autograder.running.results import result_path
from autograder.running.submissions import find
from notebooks import ROOT, grade_rows
from points import EXERCISES

ASSIGNMENT = "autograd-exercises"
SOLUTION = ROOT / "solutions" / f"{ASSIGNMENT}.ipynb"
CLI = [sys.executable, "-m", "autograder"]
SUFFIX = b".ipynb"

#: One file name as the file system holds it: any bytes but ``/`` and NUL, at most NAME_MAX
#: with ``.ipynb``; as Python hands it over (surrogate-escaped).
FS_NAME = st.binary(min_size=1, max_size=NAME_MAX - len(SUFFIX)).filter(
    lambda b: b"/" not in b and b"\0" not in b).map(lambda b: os.fsdecode(b + SUFFIX))
#: Any Python string, lone surrogates included (a name from a document, a roster, a manifest).
ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=300)


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([*CLI, *args], cwd=ROOT, capture_output=True, text=True,
                          errors="replace", timeout=1800)
    if check:
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


# -- the name functions ----------------------------------------------------------------------

@given(st.one_of(FS_NAME, ANY_TEXT))
def test_text_is_printable_and_one_to_one(name):
    shown = text(name)
    assert raw(shown) == name  # reversible, hence two names never share a text
    assert all(ch.isprintable() for ch in shown)
    shown.encode("utf-8")  # no surrogate left: every writer can write it


@given(st.text(st.characters(exclude_characters="\\"), max_size=50).filter(str.isprintable))
def test_an_ordinary_name_is_its_own_text(name):
    assert text(name) == name


@given(FS_NAME)
def test_a_names_bytes_are_the_bytes_on_disk(name):
    assert name_bytes(name) == os.fsencode(name)


@given(ANY_TEXT, st.integers(0, 2**31 - 1), st.integers(1, 9))
def test_seeds_and_shards_take_any_name(name, seed, count):
    assert submission_seed(seed, f"path:{name}") == submission_seed(seed, f"path:{name}")
    assert 1 <= shard_of(name, count) <= count
    listing_digest([name, text(name)])


@given(st.one_of(FS_NAME, ANY_TEXT.filter(bool)), st.sampled_from(["", ".json", ".html"]))
def test_every_file_named_after_a_submission_fits_name_max(name, suffix):
    part = fit(name, suffix)
    assert len(name_bytes(part)) <= NAME_MAX and part.endswith(suffix)
    if len(name_bytes(name + suffix)) <= NAME_MAX:
        assert part == name + suffix


@given(st.lists(st.one_of(FS_NAME, ANY_TEXT.filter(bool)), min_size=2, max_size=2,
                unique=True))
def test_names_cut_to_fit_stay_apart(pair):
    assert fit(pair[0], ".json") != fit(pair[1], ".json")


#: One part of a path as an attacker would pick it: any name, a name that ends like a cut one
#: (``~`` and 16 hex digits), what ``fit`` makes of a long one, a name of one of our files.
HOSTILE_PART = st.one_of(
    FS_NAME, st.sampled_from(["a", "hw", "hw.ipynb", ".ipynb", "..ipynb", ".ipynb.ipynb"]),
    st.builds(lambda s, n: fit(s * n), st.sampled_from(["a", "é", "\\x0a"]),
              st.integers(60, 300)),
    st.builds(lambda a, h: a + "~" + h, st.sampled_from(["", "a" * 230]),
              st.text("0123456789abcdef", min_size=16, max_size=16)),
    st.builds(lambda n, s: n + s, st.sampled_from(["victim.ipynb", "v", ""]),
              st.sampled_from([".json", ".md", ".html", ".ipynb.json"])))
HOSTILE_PATH = st.lists(HOSTILE_PART.filter(lambda p: p not in ("", ".", "..") and "/" not in p),
                        min_size=1, max_size=3).map("/".join)


def _outputs(names: list[str]) -> dict[str, list[tuple[str, ...]]]:
    """Each name's result document and feedback pages, as path parts."""
    return {n: [result_path(Path(), n).parts]
            + [feedback_files.feedback_path(Path(), n, s).parts for s in (".md", ".html")]
            for n in names}


@settings(max_examples=300)
@given(st.lists(HOSTILE_PATH.map(lambda p: p + ".ipynb"), min_size=2, max_size=5, unique=True))
def test_no_submissions_output_is_or_holds_anothers(names):
    """Injective and prefix-free over a run's names: no result document or feedback page of
    one submission is another's, or a folder above it. Beside each drawn name, its twins: a
    folder named as its result document (``victim.ipynb.json/``), a file named as its
    feedback page, a folder named as its cut folder."""
    twins = []
    for n in names:
        doc = result_path(Path(), n).as_posix()
        page = feedback_files.feedback_path(Path(), n, ".html").as_posix()
        twins += [doc + "/x.ipynb", page[: -len(".html")] + ".ipynb"]
        if "/" in doc:
            twins.append(doc.rsplit("/", 1)[0] + "/" + n.rsplit("/", 1)[-1])
    names = sorted(set(names + twins))
    outputs = _outputs(names)
    for a in names:
        for b in names:
            if a == b:
                continue
            for pa in outputs[a]:
                for pb in outputs[b]:
                    assert pa != pb, (a, b)
                    assert pb[: len(pa)] != pa, f"{a}'s {pa} holds {b}'s {pb}"


@pytest.mark.parametrize("name, twin", [
    # a folder named as another's cut name (cut-name-collision)
    ("a" * 238 + "\\x0a" * 17 + "/hw.ipynb", fit("a" * 238 + "\\x0a" * 17) + "/hw.ipynb"),
    # a file named as another's cut feedback page (feedback-html-collision)
    ("a" * 230 + "\U0001F600" + "\\x0a" * 5 + ".ipynb",
     fit("a" * 230 + "\U0001F600" + "\\x0a" * 5, ".html")[: -len(".html")] + ".ipynb"),
    # a folder named as another's result document (result-folder-collision)
    ("victim.ipynb", "victim.ipynb.json/evil.ipynb"),
    (".ipynb", ".ipynb.ipynb"),  # stems that name no file
])
def test_the_red_teams_pairs_keep_their_own_outputs(name, twin):
    outputs = _outputs([name, twin])
    for pa in outputs[name]:
        for pb in outputs[twin]:
            assert pa != pb and pb[: len(pa)] != pa and pa[: len(pb)] != pb


def test_a_folders_row_is_named_inside_it(tmp_path):
    """``sec2/`` and ``./`` (folders that could not be listed) keep their documents."""
    assert relative("sec2/", ".json") == "sec2/.json" and relative("./", ".json") == ".json"
    for name in ("sec2/", "./"):
        ResultDoc.rejected(name, f"{name}: could not be listed").write(tmp_path / "results")
    assert sorted(d.file for d in iter_results(tmp_path)) == ["./", "sec2/"]


@pytest.mark.parametrize("name", ["", "/etc/passwd", "../x.ipynb", "a/./b.ipynb", "a//b",
                                  "/", "../", "a/../"])
def test_a_name_that_is_no_relative_path_is_refused(name):
    with pytest.raises(ValueError, match="not a relative file name"):
        relative(name, ".json")


# -- real folders of such files: find, documents, feedback -----------------------------------

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(FS_NAME, min_size=1, max_size=6, unique_by=os.fsencode))
def test_every_file_of_any_name_gets_its_own_document_and_feedback(tmp_path_factory, names):
    folder = tmp_path_factory.mktemp("in")
    out = tmp_path_factory.mktemp("out") / ASSIGNMENT
    for name in names:
        (folder / name).write_bytes(b"not json")
    subs = find(folder, ASSIGNMENT)
    assert sorted(s.name for s in subs) == sorted(map(text, names))
    for sub in subs:
        assert sub.problem.startswith(f"{sub.name}: not a notebook")
        ResultDoc.rejected(sub.name, sub.problem, assignment=ASSIGNMENT).write(out / "results")
    assert sorted(d.file for d in iter_results(out)) == sorted(map(text, names))
    written = feedback_files.write_all(out)
    assert len(written) == len(names) and all(p.is_file() for p in written)
    for path in out.rglob("*"):
        assert len(os.fsencode(path.name)) <= NAME_MAX


def canvas(files: list[str]) -> Grades:
    header = ["file", "q1", "total_points_earned", "percent_correct", "grading_status"]
    return Grades(header, {"q1": 1.0}, [dict(zip(header, [f, "1", "1", "1", "Completed"]))
                                        for f in files])


@given(st.lists(FS_NAME.map(text), min_size=1, max_size=6, unique=True), st.data())
def test_two_rows_for_one_canvas_id_never_both_land(files, data):
    """One row per id lands; a repeated row, or ids that print alike (NFC/NFD), are refused."""
    grades = canvas(files)
    # as a gradebook sees an id: how it prints, without the spaces around it
    folded = {unicodedata.normalize("NFC", f[: -len(".ipynb")]).strip() for f in files}
    if len(folded) == len(files):
        body = exports.canvas_csv(grades, ASSIGNMENT, exports.canvas_ids(grades, None)[0])
        assert len(body.splitlines()) == 2 + len(files)
    else:
        with pytest.raises(exports.CanvasError):
            exports.canvas_ids(grades, None)
    again = data.draw(st.sampled_from(files))
    for clash in {again} | {unicodedata.normalize(form, again) for form in ("NFC", "NFD")}:
        with pytest.raises(exports.CanvasError, match="would share the SIS User ID"):
            exports.canvas_ids(canvas([*files, clash]), None)


# -- the real CLI ----------------------------------------------------------------------------

@pytest.mark.slow
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(FS_NAME, min_size=1, max_size=5, unique_by=os.fsencode))
def test_the_cli_gives_any_name_one_row_and_its_reports(tmp_path_factory, names):
    """Rejected files (nothing runs): exit 0, one row per file under its text, every report."""
    folder, out = tmp_path_factory.mktemp("in"), tmp_path_factory.mktemp("out")
    for name in names:
        (folder / name).write_bytes(b"{")
    # the otter runner: it starts nothing before a file needs running (docker-fork's judge
    # container takes seconds to start for files that never run)
    proc = cli("grade", "-a", ASSIGNMENT, "-p", str(folder), "-o", str(out), "--seed", "3",
               "--runner", "otter")
    # read back as the reports read it: a name starting like a formula (``@.ipynb``) is
    # written quoted (``'@.ipynb``) and read back as it was
    rows = read_grades(out / ASSIGNMENT).rows
    assert sorted(r["file"] for r in rows) == sorted(map(text, names))
    lines = (out / ASSIGNMENT / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(line)["file"] for line in lines) == sorted(map(text, names))
    assert len(list((out / ASSIGNMENT / "feedback").rglob("*.html"))) == len(names)
    assert "\x1b" not in proc.stdout and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_the_cli_keeps_each_students_outputs_apart_and_reports(tmp_path):
    """The red team's names in one run (rejected files: nothing runs): a 64-byte Latin-1 name
    (262 characters as text: the class report looked its page up uncut, ENAMETOOLONG, exit 4),
    a folder named as another's result document, a folder named as another's cut folder, a
    file named as another's cut feedback page. Exit 0, every file its own document and pages,
    every report written."""
    folder, out = tmp_path / "in", tmp_path / "out"
    long_text = "a" * 238 + "\\x0a" * 17
    cut_html = fit("a" * 230 + "\U0001F600" + "\\x0a" * 5, ".html")[: -len(".html")]
    names = [b"\xe9" * 64 + b".ipynb", b"victim.ipynb", b"victim.ipynb.json/evil.ipynb",
             os.fsencode("a" * 238 + "\n" * 17) + b"/hw.ipynb", os.fsencode(fit(long_text)) + b"/hw.ipynb",
             os.fsencode("a" * 230 + "\U0001F600" + "\n" * 5 + ".ipynb"),
             os.fsencode(cut_html + ".ipynb")]
    for name in names:
        path = os.fsencode(folder) + b"/" + name
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(b"{" if b"evil" not in name else b"{}")
    proc = cli("grade", "-a", ASSIGNMENT, "-p", str(folder), "-o", str(out), "--seed", "3",
               "--runner", "otter", check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    a = out / ASSIGNMENT
    files = sorted(text(os.fsdecode(n)) for n in names)
    rows = read_grades(a).rows
    assert sorted(r["file"] for r in rows) == files
    assert not [r for r in rows if r["grading_status"].startswith("grader-error")]
    assert sorted(d.file for d in iter_results(a)) == files  # each its own document
    for page in (".md", ".html"):
        assert len(list((a / "feedback").rglob("*" + page))) == len(names), page
    lines = (a / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert sorted(json.loads(line)["file"] for line in lines) == files
    assert (a / "report" / "class_report.html").is_file()
    assert (a / "canvas_gradebook.csv").is_file()


ODD_NAMES = {  # file name on disk -> what it is
    os.fsdecode(b"caf\xe9-hw.ipynb"): "Latin-1 byte, not UTF-8 (unzip of a Windows archive)",
    "n" * 231 + ".ipynb": "237 bytes: its document's temporary name passed NAME_MAX",
    "m" * 249 + ".ipynb": "exactly NAME_MAX",
    "é" * 124 + ".ipynb": "254 bytes of two-byte characters",
    "café.ipynb": "NFC",
    "cafe\u0301.ipynb": "NFD: prints like the NFC one",
    "two\nlines\x1b[2J.ipynb": "a newline and an escape sequence",
    "plain.ipynb": "an ordinary name beside them",
}


@pytest.mark.slow
@pytest.mark.needs_root
def test_one_batch_of_odd_names_grades_each_in_full(tmp_path):
    """The solution under every odd name, one sealed run: every copy full marks under its own
    printable name, its own document, feedback page and Canvas id (a roster tells the NFC and
    NFD students apart; without one their ids would clash and the gradebook is refused)."""
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ODD_NAMES:
        shutil.copyfile(SOLUTION, folder / name)
    roster = tmp_path / "roster.csv"
    roster.write_text("file,student_id\n" + "".join(
        f"{text(n)},s{i}\n" for i, n in enumerate(ODD_NAMES) if n.startswith("caf")),
        encoding="utf-8")
    out = tmp_path / "out"
    proc = cli("grade", "-p", str(folder), "-o", str(out), "--seed", "7", "--runner", "sealed",
               "--jobs", "2", "--roster", str(roster))
    rows = grade_rows(out)[ASSIGNMENT]
    for name, what in ODD_NAMES.items():
        row = rows[text(name)]
        assert (row["total_points_earned"], row["grading_status"]) == (f"{EXERCISES:g}",
                                                                 "Completed"), what
    assert "2 autograd-exercises submissions have names that print alike" in proc.stdout
    assert len(list((out / ASSIGNMENT / "results").iterdir())) == len(ODD_NAMES)
    pages = list((out / ASSIGNMENT / "feedback").glob("*.html"))
    assert len(pages) == len(ODD_NAMES)
    report = (out / ASSIGNMENT / "report" / "class_report.html").read_text(encoding="utf-8")
    from autograder.reporting.class_report import feedback_link

    for name in ODD_NAMES:  # the class report links each page that exists (URL-quoted)
        link = feedback_link(text(name))
        assert link in report
        assert (out / ASSIGNMENT / "report" / unquote(link)).resolve() in \
            [p.resolve() for p in pages]
    assert "\x1b" not in report + proc.stdout
    gradebook = (out / ASSIGNMENT / "canvas_gradebook.csv").read_text(encoding="utf-8")
    assert len(gradebook.splitlines()) == 2 + len(ODD_NAMES)
    # a resumed run finds every document by the same name rule: nothing graded again
    again = cli("grade", "-p", str(folder), "-o", str(out), "--resume", "--no-reports",
                "--roster", str(roster), "--json")
    summary = json.loads(again.stdout)["assignments"][ASSIGNMENT]
    assert (summary["graded_now"], summary["skipped"]) == (0, len(ODD_NAMES)), summary


def test_a_result_document_that_cannot_be_written_is_its_row(tmp_path):
    """A write the file system refuses (here: the results folder is a file) is a grader error
    row for that submission, never an exception that ends the batch."""
    blocked = tmp_path / "results"
    blocked.write_text("not a folder")
    row = ResultDoc.rejected("a.ipynb", "a.ipynb: bad", assignment=ASSIGNMENT).written(blocked)
    assert row.name == "a.ipynb" and row.status.startswith("grader-error: its result "
                                                           "document could not be written")
    assert out_path(tmp_path, "a.ipynb", ".json") == tmp_path / "a.ipynb.json"


@given(st.one_of(FS_NAME, ANY_TEXT))
def test_the_console_prints_any_name_or_path(name):
    """A folder staff name that is not UTF-8 (``caf\\xe9/``) is printed, escaped as in reports."""
    from autograder.running.names import printable

    shown = printable(f"grading from /in/{name}")
    shown.encode("utf-8")
    assert "\x1b" not in shown


#: Unicode's categories of characters that move, hide or reorder text (controls, format
#: characters such as the bidirectional overrides and zero-width spaces, surrogates, line and
#: paragraph separators): what ``names.visible`` escapes, but the line break and the tab.
HIDING = ("Cc", "Cf", "Cs", "Zl", "Zp")


def test_visible_escapes_every_hiding_character_of_this_pythons_unicode():
    """Does ``visible``'s hand-made list hold every character of the hiding categories in the
    running Python's Unicode database (a newer Python may add some), and nothing else
    (but code points a newer Unicode gave such a character: unassigned here)?"""
    from autograder.running.names import visible

    for code in range(0x110000):
        ch, kind = chr(code), unicodedata.category(chr(code))
        if kind != "Cn":
            hiding = kind in HIDING and ch not in "\n\t"
            assert (visible(ch) != ch) == hiding, f"U+{code:04X} {kind}"


@given(st.one_of(FS_NAME, ANY_TEXT))
def test_visible_text_holds_no_hiding_character_and_keeps_the_rest(message):
    """Whatever a notebook prints, its ``visible`` form holds only line breaks, tabs and
    characters that show, encodes as UTF-8, and is the message itself where nothing hid."""
    from autograder.running.names import visible

    shown = visible(message)
    shown.encode("utf-8")
    assert not any(unicodedata.category(c) in HIDING and c not in "\n\t" for c in shown)
    if not any(unicodedata.category(c) in HIDING and c not in "\n\t" for c in message):
        assert shown == message


@pytest.mark.slow
def test_the_cli_turns_a_refused_write_into_that_files_row(tmp_path):
    """Through ``autograder grade``: a.ipynb's document cannot be written (a folder is in its
    place); a.ipynb gets a grader-error row saying so, b.ipynb its own row, exit 3."""
    folder, out = tmp_path / "in", tmp_path / "out"
    folder.mkdir()
    for name in ("a.ipynb", "b.ipynb"):
        (folder / name).write_text("{")
    (out / ASSIGNMENT / "results" / "a.ipynb.json").mkdir(parents=True)
    proc = cli("grade", "-a", ASSIGNMENT, "-p", str(folder), "-o", str(out), "--seed", "2",
               "--no-reports", "--runner", "otter", check=False)  # nothing runs (above)
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = grade_rows(out)[ASSIGNMENT]
    assert rows["a.ipynb"]["grading_status"].startswith(
        "grader-error: its result document could not be written (IsADirectoryError")
    assert rows["b.ipynb"]["grading_status"].startswith("b.ipynb: not a notebook")
