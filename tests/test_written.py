"""Written answers (no grader started): the questions and rubrics in the real masters, the
answers read from real notebooks, the grading page's safety, and the scores files' checks.
The whole path through the CLI and a browser: tests/test_written_slow.py."""

import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.authoring import written as questions
from autograder.reporting.written import pages, scores
from autograder.running.batch import written_answers as answers

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = "autograd-exercises"


def master(assignment: str = EXERCISES) -> Path:
    return ROOT / "assignments" / assignment / f"{assignment}.ipynb"


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def test_are_the_masters_written_questions_read_with_their_rubrics():
    found = {a: questions.from_master(master(a)) for a in ("autograd-exercises",
                                                           "autograd-porting")}
    assert [q.name for q in found["autograd-exercises"]] == ["q1_written", "q2_written"]
    assert [q.name for q in found["autograd-porting"]] == ["q4_written"]
    for q in sum(found.values(), []):
        assert q.points == 2 and q.step == 0.5
        assert q.prompt.startswith("**Written (") and q.rubric.startswith("**Rubric**")
        assert q.solution and "Rubric" not in q.solution and "Rubric" not in q.prompt


@pytest.mark.parametrize("assignment", ["autograd-exercises", "autograd-porting"])
def test_does_the_rubric_stay_out_of_what_students_and_samples_get(assignment):
    rubrics = [q.rubric.splitlines()[2] for q in questions.from_master(master(assignment))]
    for path in [ROOT / "student_templates" / assignment / f"{assignment}.ipynb",
                 ROOT / "solutions" / f"{assignment}.ipynb"]:
        text = path.read_text(encoding="utf-8")
        assert "**Rubric" not in text and not any(json.dumps(r)[1:-1] in text
                                                  for r in rubrics), path


def test_are_the_sample_answers_read_from_the_real_notebooks():
    qs = questions.from_master(master())
    ada = answers.answers(cells(ROOT / "submissions" / EXERCISES / "ada-lovelace.ipynb"), qs)
    assert ada["q1_written"]["answer"].startswith("Each `p ** 2` records a new graph")
    assert ada["q2_written"]["answer"].startswith("The tracked run keeps")
    assert ada["q1_written"]["note"] == ""
    blank = answers.answers(cells(ROOT / "submissions" / EXERCISES / "untouched-template.ipynb"),
                            qs)
    assert blank == {q.name: {"answer": "", "note": answers.UNANSWERED} for q in qs}


def test_is_an_answer_found_however_the_student_rearranged_the_cells():
    qs = questions.from_master(master())
    template = cells(ROOT / "student_templates" / EXERCISES / f"{EXERCISES}.ipynb")
    prompt = next(i for i, c in enumerate(template)
                  if "graded by hand).** The loop" in "".join(c["source"]))
    edited = copy.deepcopy(template)
    # two answer cells and a code cell; the prompt itself rewritten
    edited[prompt + 1]["source"] = "First part."
    edited.insert(prompt + 2, {"cell_type": "code", "source": "x = 1", "metadata": {},
                               "outputs": [], "execution_count": None})
    edited.insert(prompt + 3, {"cell_type": "markdown", "source": "Second part.",
                               "metadata": {}})
    edited[prompt]["source"] = "<!-- BEGIN QUESTION -->\n\nI rewrote the question."
    got = answers.answers(edited, qs)["q1_written"]
    assert got["answer"] == "First part.\n\n```python\nx = 1\n```\n\nSecond part."
    gone = [c for c in template if "BEGIN QUESTION" not in "".join(c["source"])]
    assert answers.answers(gone, qs)["q2_written"]["note"] == answers.NOT_FOUND


HOSTILE = ("<script>alert(1)</script> <b onclick=alert(2)>bold</b> "
           "![tracker](http://example.invalid/x.png) [link](javascript:alert(3))\n\n"
           "</article></div><textarea>\n\n" + "x" * 9000)


def test_can_a_hostile_answer_not_break_the_page_or_reach_the_network():
    q = questions.from_master(master())[0]
    docs = [{"file": f"s/{n}.ipynb", answers.KEY: {q.name: {"answer": HOSTILE, "note": ""}}}
            for n in ("ann", "bob")]
    html = pages.render(EXERCISES, q, docs, seed=3)
    assert "<script>alert" not in html and "<b onclick" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b onclick=alert(2)&gt;bold&lt;/b&gt;" in html
    assert "<img" not in html and 'href="javascript' not in html
    assert "&lt;/article&gt;&lt;/div&gt;&lt;textarea&gt;" in html
    assert html.count("<article") == html.count("</article>") == 2
    assert "default-src 'none'" in html and "script-src 'sha256-" in html
    assert html.count("<script>") == 1  # the page's own, allowed by its hash
    assert "s/ann.ipynb" not in html.replace('data-file="s/ann.ipynb"', "")


def test_are_pseudonyms_stable_and_the_order_not_the_file_names():
    q = questions.from_master(master())[0]
    docs = [{"file": f"student-{i:02d}.ipynb"} for i in range(12)]
    first = [e["label"] for e in pages.entries(docs, q, 3, names=False)]
    assert first == [e["label"] for e in pages.entries(docs, q, 3, names=False)]
    order = [e["file"] for e in pages.entries(docs, q, 3, names=False)]
    assert order != sorted(order) and len(set(first)) == 12
    assert all(label.startswith("answer-") for label in first)
    assert [e["label"] for e in pages.entries(docs, q, 3, names=True)] == sorted(order)
    assert first != [e["label"] for e in pages.entries(docs, q, 4, names=False)]


KNOWN = {"q1_written": 2.0, "q2_written": 2.0}


def write(tmp_path: Path, text: str, name: str = "scores.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


@pytest.mark.parametrize("text, problem", [
    ("file,question,points,comment\na.ipynb,q9,1,\n", "row 2: unknown question 'q9'"),
    ("file,question,points,comment\nz.ipynb,q1_written,1,\n", "row 2: unknown file 'z.ipynb'"),
    ("file,question,points,comment\na.ipynb,q1_written,-0.5,\n", "row 2: points -0.5 are below 0"),
    ("file,question,points,comment\na.ipynb,q1_written,2.5,\n", "row 2: points 2.5 are above 2"),
    ("file,question,points,comment\na.ipynb,q1_written,two,\n", "row 2: points 'two' is not a"),
    ("file,question,points,comment\na.ipynb,q1_written,nan,\n", "not a finite number"),
    ("file,question,points,comment\na.ipynb,q1_written,1,\na.ipynb,q1_written,2,x\n",
     "row 3: a.ipynb q1_written: 2 points, but row 2 gives 1"),
    ("file,question,points\na.ipynb,q1_written,1\n", "row 1: not a scores file"),
    ("\x89PNG\r\n\x1a\n\x00\xff", "not a CSV file: not UTF-8"),
    ('file,question,points,comment\na.ipynb,q1_written,1,"unclosed\n', "not a CSV file"),
    ("file,question,points,comment\na.ipynb,q1_written\n", "row 2: 2 cells, not 4"),
    ("file,question,points,comment\na.ipynb,q1_written,0.3,\n",
     "row 2: points 0.3 are not a multiple of 0.5, q1_written's step"),
])
def test_is_a_bad_scores_file_refused_naming_file_row_and_problem(tmp_path, text, problem):
    path = write(tmp_path, text.encode("latin-1") if "\x89" in text else text)
    with pytest.raises(scores.ScoresError) as caught:
        scores.read(path, KNOWN, {"a.ipynb"}, {"q1_written": 0.5})
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and problem in message and "\n" not in message


def test_are_points_on_the_step_taken_and_minus_zero_read_as_zero(tmp_path):
    path = write(tmp_path, "file,question,points,comment\na.ipynb,q1_written,1.5,\n"
                           "a.ipynb,q2_written,-0,\n")
    got = scores.read(path, KNOWN, None, {"q1_written": 0.5, "q2_written": 0.5})
    assert got[("a.ipynb", "q1_written")].points == 1.5
    assert str(got[("a.ipynb", "q2_written")].points) == "0.0"


def test_do_two_files_that_disagree_name_the_second_one(tmp_path):
    one = write(tmp_path, "file,question,points,comment\na.ipynb,q1_written,1,ok\n", "one.csv")
    two = write(tmp_path, "file,question,points,comment\na.ipynb,q1_written,1.5,\n", "two.csv")
    same = write(tmp_path, "file,question,points,comment\na.ipynb,q1_written,1,also\n", "s.csv")
    known = {"A": (questions.from_master(master()), {"a.ipynb"})}
    with pytest.raises(scores.ScoresError, match=r"two\.csv: row 2: .*1\.5 points, but .*one"):
        scores.merge([one, two], known)
    merged = scores.merge([one, same], known)
    assert merged["A"][("a.ipynb", "q1_written")] == scores.Score(1.0, "ok\nalso")


comments = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                   max_size=60)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=20).filter(lambda s: s.strip() == s
                                                                   and "\x00" not in s),
                          st.sampled_from(sorted(KNOWN)),
                          st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0, 2.0])),
                          comments), max_size=8))
def test_does_a_scores_file_read_back_what_was_written(tmp_path_factory, rows):
    table = {(f, q): scores.Score(p, c.strip()) for f, q, p, c in rows
             if p is not None or c.strip()}
    path = tmp_path_factory.mktemp("s") / "scores.csv"
    path.write_text(scores.to_csv(table), encoding="utf-8")
    assert scores.read(path, KNOWN) == table


def test_does_a_rewritten_blank_scores_file_keep_what_a_grader_filled_in(tmp_path):
    qs = questions.from_master(master())
    path = scores.write_blank(tmp_path, ["a.ipynb", "b.ipynb"], qs)
    text = path.read_text().replace("a.ipynb,q1_written,,", "a.ipynb,q1_written,1.5,good")
    path.write_text(text)
    scores.write_blank(tmp_path, ["a.ipynb", "b.ipynb", "c.ipynb"], qs)
    got = scores.read(path, None)
    assert got == {("a.ipynb", "q1_written"): scores.Score(1.5, "good")}
    assert path.read_text().count("\n") == 1 + 3 * len(qs)
    path.write_bytes(b"file;question;points\r\na.ipynb;q1_written;1,5\r\n")  # a spreadsheet's
    scores.write_blank(tmp_path, ["a.ipynb"], qs)
    assert path.read_bytes() == b"file;question;points\r\na.ipynb;q1_written;1,5\r\n"


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(["a.ipynb", "b.ipynb", "c.ipynb"]),
                       st.tuples(st.sampled_from([0.0, 1.25, 3.5]),
                                 st.one_of(st.none(), st.sampled_from([0.0, 0.5, 2.0]))),
                       min_size=1))
def test_do_written_columns_count_what_is_graded_and_leave_the_rest_empty(tmp_path_factory,
                                                                          table):
    from autograder.running.outputs import final_grades
    from autograder.running.resultdoc import Graded

    folder = tmp_path_factory.mktemp("g")
    graded = [Graded(f, {"q1": (auto, 3.5)}, "Completed") for f, (auto, _) in table.items()]
    given_points = {(f, "q1_written"): w for f, (_, w) in table.items()}
    final_grades.write(folder / final_grades.FILE, graded, {"q1": 3.5},
                     ({"q1_written": 2.0}, given_points))
    grades = final_grades.read(folder)
    assert grades.possible == {"q1": 3.5, "q1_written": 2.0}
    for row in grades.rows:
        auto, written = table[row["file"]]
        assert row["q1_written"] == ("" if written is None else f"{written:g}")
        assert float(row["total_points_earned"]) == auto + (written or 0)
        assert float(row["percent_correct"]) == round((auto + (written or 0)) / 5.5, 4)
        assert row[final_grades.UNGRADED] == str(int(written is None))
