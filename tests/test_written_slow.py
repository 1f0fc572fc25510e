"""Written answers end to end, through the real CLI: ``autograder grade`` (sealed runner) on a
small folder writes the grading pages and blank scores; a headless Chromium scores a page,
reloads it and exports; ``autograder report --written`` merges the export into the grades,
gradebook, feedback and class report; bad scores files change nothing."""

import csv
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import browser
from points import EXERCISES, written_points

ROOT = Path(__file__).resolve().parent.parent
A = "autograd-exercises"

# one xdist worker holds the whole module, so its grading run happens once
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("written"), pytest.mark.needs_root]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", "--root", str(ROOT), *args],
                          capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("subs")
    for name in ("ada-lovelace", "untouched-template"):
        shutil.copyfile(ROOT / "submissions" / A / f"{name}.ipynb", folder / f"{name}.ipynb")
    out = tmp_path_factory.mktemp("out")
    proc = cli("grade", "-p", str(folder), "-o", str(out), "--seed", "5", "--runner",
               "sealed", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    return out


def rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def snapshot(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file()}


def test_does_grading_write_the_pages_and_a_blank_scores_file(graded):
    written = graded / A / "written"
    assert {p.name for p in written.iterdir()} >= {"q1_written.html", "q2_written.html",
                                                   "scores.csv", "questions.json"}
    blank = rows(written / "scores.csv")
    assert {(r["file"], r["question"]) for r in blank} == {
        (f, q) for f in ("ada-lovelace.ipynb", "untouched-template.ipynb")
        for q in ("q1_written", "q2_written")}
    assert all(r["points"] == "" for r in blank)
    page = (written / "q1_written.html").read_text()
    assert "**Rubric" not in page and "<strong>Rubric</strong>" in page
    assert "Each <code>p ** 2</code> records a new graph" in page
    assert ">ada-lovelace.ipynb<" not in page  # pseudonyms by default
    # grading alone adds no written column: the totals are the auto-graded points
    assert "q1_written" not in rows(graded / A / "final_grades.csv")[0]


def test_can_a_grader_score_reload_and_export_in_chromium(graded, tmp_path):
    """The page from file://: points and comments typed in, the page reloaded (the browser's
    storage keeps them), then the Export button's download read back."""
    webdriver, options, driver_path = browser()
    from selenium.webdriver.common.by import By

    options.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                              "download.prompt_for_download": False})
    page_path = graded / A / "written" / "q1_written.html"
    driver = webdriver.Chrome(options=options,
                              service=webdriver.ChromeService(executable_path=driver_path))
    entered = {"ada-lovelace.ipynb": ("1.5", '=SUM(A1), "quoted"\nsecond line'),
               "untouched-template.ipynb": ("0", "No answer.")}
    try:
        driver.execute_cdp_cmd("Browser.setDownloadBehavior",
                               {"behavior": "allow", "downloadPath": str(downloads)})
        driver.get(page_path.as_uri())
        for article in driver.find_elements(By.CSS_SELECTOR, "article.answer"):
            points, comment = entered[article.get_attribute("data-file")]
            article.find_element(By.CSS_SELECTOR, "input.points").send_keys(points)
            article.find_element(By.CSS_SELECTOR, "textarea.comment").send_keys(comment)
        assert driver.find_element(By.ID, "progress").text.startswith("2 of 2 graded")
        # the page wrote both entries to localStorage; Chromium hands them to its browser
        # process asynchronously, and a reload can read back from there first under load (the
        # full suite lost them at load 6, and once more after a 2 s pause): a grader's reload
        # comes seconds after the typing. So reload until the page shows them, for up to 60 s:
        # entries that were never kept still fail the test
        from selenium.common.exceptions import TimeoutException
        from selenium.webdriver.support.ui import WebDriverWait

        deadline = time.monotonic() + 60
        while True:
            time.sleep(1)
            driver.refresh()
            try:  # the page restores what the browser kept once its script has run
                WebDriverWait(driver, 5).until(lambda d: d.find_element(
                    By.ID, "progress").text.startswith("2 of 2 graded"))
                break
            except TimeoutException:
                if time.monotonic() > deadline:
                    raise
        kept = {a.get_attribute("data-file"): (
            a.find_element(By.CSS_SELECTOR, "input.points").get_attribute("value"),
            a.find_element(By.CSS_SELECTOR, "textarea.comment").get_attribute("value"))
            for a in driver.find_elements(By.CSS_SELECTOR, "article.answer")}
        assert kept == entered
        # an out-of-range value is flagged and blocks the export until fixed
        first = driver.find_element(By.CSS_SELECTOR, "article.answer input.points")
        before = first.get_attribute("value")
        first.send_keys("5")
        assert not driver.find_element(By.ID, "export").is_enabled()
        assert "fix the points" in driver.find_element(By.ID, "progress").text
        for _ in range(len(first.get_attribute("value")) + 1):
            first.send_keys("\b")
        first.send_keys(before)
        driver.find_element(By.ID, "export").click()
        target = downloads / f"{A}-q1_written-scores.csv"
        for _ in range(100):  # a download finishes when it has its name (not a timing check)
            if target.exists():
                break
            time.sleep(0.1)
        driver.save_screenshot(str(tmp_path / "page.png"))
    finally:
        driver.quit()
    got = {(r["file"], r["question"]): (r["points"], r["comment"]) for r in rows(target)}
    # each row names the answer it scores, as the blank scores file does
    blank = {(r["file"], r["question"]): r["answer"]
             for r in rows(page_path.parent / "scores.csv")}
    assert {(r["file"], r["question"]): r["answer"] for r in rows(target)} == {
        k: blank[k] for k in got} and all(blank.values())
    # what the page exports is what the scores reader reads: the formula guard round-trips
    from autograder.reporting.written import scores

    read = scores.read(target, {"q1_written": 2.0})
    assert {k[0]: (f"{v.points:g}", v.comment) for k, v in read.items()} == entered
    assert got[("ada-lovelace.ipynb", "q1_written")][1].startswith("'=SUM")
    assert (tmp_path / "page.png").read_bytes()[:4] == b"\x89PNG"


def test_does_report_written_merge_scores_everywhere(graded, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(graded, out)
    scores_file = tmp_path / "q1.csv"
    scores_file.write_text("file,question,points,comment\n"
                           "ada-lovelace.ipynb,q1_written,1.5,Misses why retain_graph is not "
                           "the fix.\nuntouched-template.ipynb,q1_written,0,No answer.\n")
    proc = cli("report", "-o", str(out), "--written", str(scores_file))
    assert proc.returncode == 0, proc.stderr
    assert "2 of 4 not graded yet" in proc.stdout
    grades = {r["file"]: r for r in rows(out / A / "final_grades.csv")}
    # ada's auto-graded full marks and the 1.5 written points above, out of all the points
    earned, total = EXERCISES + 1.5, EXERCISES + sum(written_points(A).values())
    assert grades["points-per-question"]["total_points_earned"] == f"{total:g}"
    ada = grades["ada-lovelace.ipynb"]
    assert (ada["q1_written"], ada["q2_written"], ada["written_ungraded"]) == ("1.5", "", "1")
    assert ada["total_points_earned"] == f"{earned:g}"
    assert ada["percent_correct"] == str(round(earned / total, 4))
    canvas = {r["SIS User ID"]: r[A] for r in rows(out / A / "canvas_gradebook.csv")}
    assert canvas["ada-lovelace"] == f"{earned:g}"
    feedback = (out / A / "feedback" / "ada-lovelace.md").read_text()
    assert ("## q1_written (written, graded by hand): 1.5 / 2\n\n"
            "> Misses why retain_graph is not the fix.\n") in feedback
    assert "## q2_written (written, graded by hand): not graded yet / 2\n" in feedback
    assert f"**Score: {earned:g} / {total:g}**" in feedback
    html = (out / A / "report" / "class_report.html").read_text()
    assert "<td>q1_written</td><td>2</td><td>0: 1, 1.5: 1</td><td>0</td>" in html
    assert "<td>q2_written</td><td>2</td><td></td><td>2</td>" in html
    # a later report without --written, and a regrade, keep the merged scores
    proc = cli("report", "-o", str(out), "--written-names")
    assert proc.returncode == 0 and rows(out / A / "final_grades.csv")[1]["q1_written"] == "1.5"
    assert "<h3>ada-lovelace.ipynb</h3>" in (out / A / "written" / "q2_written.html").read_text()
    folder = json.loads((out / "grading.json").read_text())["folder"]
    proc = cli("grade", "-p", folder, "-o", str(out), "--resume", "--runner", "sealed")
    assert proc.returncode == 0, proc.stderr
    assert {r["file"]: r["q1_written"] for r in rows(out / A / "final_grades.csv")} == {
        "points-per-question": "2", "ada-lovelace.ipynb": "1.5",
        "untouched-template.ipynb": "0"}
    kept = rows(out / A / "written" / "scores.csv")  # the blank file, never a grader's
    assert all(r["points"] == "" for r in kept) and len(kept) == 4


BAD = {
    "unknown-file.csv": ("file,question,points,comment\nnobody.ipynb,q1_written,1,\n",
                         "row 2: unknown file 'nobody.ipynb'"),
    "unknown-question.csv": ("file,question,points,comment\nada-lovelace.ipynb,q7,1,\n",
                             "row 2: unknown question 'q7'"),
    "too-many.csv": ("file,question,points,comment\nada-lovelace.ipynb,q1_written,3,\n",
                     "row 2: points 3 are above 2"),
    "negative.csv": ("file,question,points,comment\nada-lovelace.ipynb,q1_written,-1,\n",
                     "row 2: points -1 are below 0"),
    "twice.csv": ("file,question,points,comment\nada-lovelace.ipynb,q1_written,1,\n"
                  "ada-lovelace.ipynb,q1_written,2,\n", "row 3: ada-lovelace.ipynb q1_written"),
    "not-csv.csv": ("\x00\x01PK\x03\x04 binary", "not a scores file"),
    "off-step.csv": ("file,question,points,comment\nuntouched-template.ipynb,q1_written,0.3,\n",
                     "row 2: points 0.3 are not a multiple of 0.5, q1_written's step"),
}


@pytest.fixture(scope="module")
def merged_good(graded, tmp_path_factory) -> tuple[Path, Path]:
    """The graded folder after one good scores file was merged (one ``report --written`` for
    every bad file below, each of which is then tried on its own copy), and that file."""
    base = tmp_path_factory.mktemp("merged")
    out, good = base / "out", base / "good.csv"
    shutil.copytree(graded, out)
    good.write_text("file,question,points,comment\nada-lovelace.ipynb,q1_written,2,\n")
    proc = cli("report", "-o", str(out), "--written", str(good))
    assert proc.returncode == 0, proc.stderr
    return out, good


@pytest.mark.parametrize("name", sorted(BAD))
def test_does_a_bad_scores_file_change_nothing(merged_good, tmp_path, name):
    merged, good = merged_good
    out = tmp_path / "out"
    shutil.copytree(merged, out)
    before = snapshot(out)
    text, problem = BAD[name]
    bad = tmp_path / name
    bad.write_text(text)
    proc = cli("report", "-o", str(out), "--written", str(good), str(bad))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and problem in lines[0], proc.stderr
    assert snapshot(out) == before


def test_is_a_score_set_aside_when_the_answer_it_was_given_for_changed(graded, tmp_path):
    """A resubmission (or another section's notebook of the same name) graded into the same
    folder is not graded yet: the old score is neither applied to it nor lost."""
    out = tmp_path / "out"
    shutil.copytree(graded, out)
    scores_file = tmp_path / "w1.csv"
    scores_file.write_text("file,question,points,comment\nada-lovelace.ipynb,q1_written,1,meh\n"
                           "untouched-template.ipynb,q1_written,0,No answer.\n")
    assert cli("report", "-o", str(out), "--written", str(scores_file)).returncode == 0
    # a grader still scoring the first run's answers (the page's export names them, as here)
    late = tmp_path / "late.csv"
    late.write_text((out / A / "written" / "scores.csv").read_text().replace(
        "ada-lovelace.ipynb,q1_written,,", "ada-lovelace.ipynb,q1_written,1.5,late"))
    again = tmp_path / "resubmitted"
    shutil.copytree(json.loads((out / "grading.json").read_text())["folder"], again)
    notebook = json.loads((again / "ada-lovelace.ipynb").read_text())
    assert "".join(notebook["cells"][8]["source"]).startswith("Each `p ** 2` records")
    notebook["cells"][8]["source"] = "I do not know, sorry."
    (again / "ada-lovelace.ipynb").write_text(json.dumps(notebook))
    proc = cli("grade", "-p", str(again), "-o", str(out), "--seed", "5", "--runner", "sealed",
               "--jobs", "1", "--replace")  # a new download of the class (rt-s3: else refused)
    assert proc.returncode == 0, proc.stderr
    aside, = (out / A / "written").glob("set_aside_scores-*.csv")
    assert (f"{A}: written answers: 1 score(s) set aside, the answer changed since it was "
            f"graded (ada-lovelace.ipynb q1_written): not applied, kept in {aside}; grade them "
            "again\n") in proc.stdout
    assert {r["file"]: r["q1_written"] for r in rows(out / A / "final_grades.csv")} == {
        "points-per-question": "2", "ada-lovelace.ipynb": "", "untouched-template.ipynb": "0"}
    feedback = (out / A / "feedback" / "ada-lovelace.md").read_text()
    assert "## q1_written (written, graded by hand): not graded yet / 2\n" in feedback \
        and "meh" not in feedback
    assert [(r["file"], r["question"], r["points"], r["comment"]) for r in rows(aside)] == [
        ("ada-lovelace.ipynb", "q1_written", "1", "meh")]
    assert "ada-lovelace" not in (aside.parent / "merged_scores.csv").read_text()
    assert "set aside" not in cli("report", "-o", str(out)).stdout  # said once, when moved
    proc = cli("report", "-o", str(out), "--written", str(late))
    assert proc.returncode == 0, proc.stderr
    assert "1 score(s) set aside, the answer changed since it was graded (ada-lovelace.ipynb " \
           "q1_written)" in proc.stdout
    assert rows(out / A / "final_grades.csv")[1]["q1_written"] == ""
    kept = sorted((out / A / "written").glob("set_aside_scores-*.csv"),
                  key=lambda p: p.stat().st_mtime)
    assert [[(r["points"], r["comment"]) for r in rows(p)] for p in kept] == [
        [("1", "meh")], [("1.5", "late")]]


def test_does_a_second_scores_file_keep_the_first_graders_scores_in_a_copy(merged_good,
                                                                           tmp_path):
    """``--written`` replaces the scores merged before (a score can be taken back); the
    earlier file is kept, said in one line, and restores them when given again."""
    out = tmp_path / "out"
    shutil.copytree(merged_good[0], out)
    second = tmp_path / "q2.csv"
    second.write_text("file,question,points,comment\nada-lovelace.ipynb,q2_written,-0,\n")
    proc = cli("report", "-o", str(out), "--written", str(second))
    assert proc.returncode == 0, proc.stderr
    copies = list((out / A / "written").glob("merged_scores-*.csv"))  # just one
    assert (f"{A}: the scores merged before are kept in {copies[0]} (1 of them in none of "
            "these files: no longer applied)\n") in proc.stdout
    assert [(r["file"], r["question"], r["points"]) for r in rows(copies[0])] == [
        ("ada-lovelace.ipynb", "q1_written", "2")]
    ada = rows(out / A / "final_grades.csv")[1]
    assert (ada["q1_written"], ada["q2_written"]) == ("", "0")  # -0 is written 0
    assert "-0" not in (out / A / "final_grades.csv").read_text()
    proc = cli("report", "-o", str(out), "--written", str(copies[0]), str(second))
    assert proc.returncode == 0, proc.stderr
    ada = rows(out / A / "final_grades.csv")[1]
    assert (ada["q1_written"], ada["q2_written"]) == ("2", "0")
