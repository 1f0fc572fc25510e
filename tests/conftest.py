import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_addoption(parser):
    # tests/test_reports_slow.py: rewrite tests/files/golden/ from the current feedback.
    parser.addoption("--update-goldens", action="store_true", default=False,
                     help="regenerate the golden feedback files instead of comparing")
