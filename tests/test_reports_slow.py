"""Feedback goldens, the class report in a real headless browser, and partial regrades.

Grades the sample submissions once with the sealed judge (root) and seed 3.
"""

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import browser
from notebooks import same_up_to_float32

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "files" / "golden"
SAMPLES = sorted((ROOT / "submissions").rglob("*.ipynb"))

# one xdist worker holds the whole module, so its grading run happens once
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("reports"), pytest.mark.needs_root]


def grade(out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autograder", "--root", str(ROOT), "grade", "-p",
         str(ROOT / "submissions"), "-o", str(out), "--seed", "3", "--runner", "sealed",
         *extra],
        capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("graded")
    proc = grade(out)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.mark.parametrize("notebook", SAMPLES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_is_the_feedback_as_pinned(graded, notebook, request):
    assignment = notebook.parent.name
    got = (graded / assignment / "feedback" / assignment / f"{notebook.stem}.md").read_text()
    golden = GOLDEN / assignment / f"{notebook.stem}.md"
    if request.config.getoption("--update-goldens"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(got)
    assert same_up_to_float32(got, golden.read_text()), (
        f"rerun with --update-goldens if {golden} should change")


def test_does_every_document_read_back_as_its_own_bytes(graded):
    """Every result document the samples got reads as typed parts (``ResultDoc``) and writes
    back byte for byte; ``results.jsonl`` holds each as its reader sees it."""
    from autograder.running.resultdoc import ResultDoc

    paths = sorted(graded.rglob("results/**/*.json"))
    assert len(paths) == len(SAMPLES)
    for path in paths:
        doc = ResultDoc.read(path)
        assert doc.to_json() == path.read_text(encoding="utf-8"), path
        assert doc.questions and all(q.tests for q in doc.questions.values()), path


def test_does_resume_skip_and_only_regrade_keep_the_others(graded, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(graded, out)
    before = {p: p.read_bytes() for p in out.rglob("results/**/*.json")}
    csv_before = (out / "autograd-exercises" / "final_grades.csv").read_bytes()
    proc = grade(out, "--resume", "--json", "--no-reports")
    assert proc.returncode == 0 and proc.stdout.lstrip().startswith("{"), proc.stderr
    assert '"graded_now": 0' in proc.stdout
    proc = grade(out, "--only", "alan-turing", "--question", "q5_numpy", "--no-reports")
    assert proc.returncode == 0, proc.stderr
    after = {p: p.read_bytes() for p in out.rglob("results/**/*.json")}
    assert after == before  # same seed: the merged question equals the original
    assert (out / "autograd-exercises" / "final_grades.csv").read_bytes() == csv_before


def test_does_the_class_report_render_and_match_the_csv(graded, tmp_path):
    webdriver, options, driver_path = browser()
    from selenium.webdriver.common.by import By

    options.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    folder = graded / "autograd-exercises"
    page = webdriver.Chrome(options=options,
                            service=webdriver.ChromeService(executable_path=driver_path))
    try:
        page.get((folder / "report" / "class_report.html").as_uri())
        images = page.find_elements(By.TAG_NAME, "img")
        assert len(images) == 4
        for img in images:
            assert page.execute_script("return arguments[0].complete && "
                                       "arguments[0].naturalWidth", img) > 0
        rows = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
                for tr in page.find_elements(By.CSS_SELECTOR, "#grades tbody tr")]
        header = [th.text for th in page.find_elements(By.CSS_SELECTOR, "#grades th")]
        page.save_screenshot(str(tmp_path / "class_report.png"))
    finally:
        page.quit()
    with open(folder / "final_grades.csv", newline="") as f:
        expected = list(csv.reader(f))
    assert header == expected[0]
    assert rows == [r for r in expected[1:] if r[0] != "points-per-question"]
    assert (tmp_path / "class_report.png").read_bytes()[:4] == b"\x89PNG"


#: For each header cell of the grades table, its text as laid out: one string per line.
HEADER_LINES = """
return Array.from(document.querySelectorAll('#grades th'), th => {
  const lines = [];
  const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.length; i++) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const top = Math.round(range.getBoundingClientRect().top);
      if (!lines.length || lines[lines.length - 1][0] !== top) lines.push([top, '']);
      lines[lines.length - 1][1] += node.data[i];
    }
  }
  return lines.map(line => line[1]);
});
"""


def test_do_the_class_report_headers_wrap_only_between_words(graded, tmp_path):
    """In a window too narrow for the table, do the column headers wrap only after an
    underscore (``total_ points_ earned``), never inside a word (``accumu lation``)?"""
    webdriver, options, driver_path = browser()
    options.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    page = webdriver.Chrome(options=options,
                            service=webdriver.ChromeService(executable_path=driver_path))
    try:
        page.set_window_size(500, 2000)
        page.get((graded / "autograd-exercises" / "report" / "class_report.html").as_uri())
        headers = page.execute_script(HEADER_LINES)
    finally:
        page.quit()
    with open(graded / "autograd-exercises" / "final_grades.csv", newline="") as f:
        expected = next(csv.reader(f))
    assert ["".join(lines) for lines in headers] == expected
    assert any(len(lines) > 1 for lines in headers)  # narrow enough that some wrap
    for lines in headers:
        assert all(line.endswith("_") for line in lines[:-1]), lines
