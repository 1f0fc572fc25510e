"""Is every unusable file caught before anything runs it, with a message naming the file?"""

from __future__ import annotations

import json

import pytest

from autograder.running.submissions import find, vet

NOTEBOOK = {"cells": [], "metadata": {"otter": {"assignment_name": "autograd-exercises"}},
            "nbformat": 4, "nbformat_minor": 5}


def write(path, content):
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return path


@pytest.mark.parametrize("content, problem", [
    (b"{not json", "not a notebook: invalid JSON at line 1"),
    (b"\xff\xfe\x00garbage", "not UTF-8 text"),
    ({**NOTEBOOK, "nbformat": 3}, "nbformat 3 is not supported"),
    ([1, 2, 3], "not a notebook: no list of cells"),
    ({**NOTEBOOK, "metadata": {}}, "cannot tell the assignment"),
])
def test_bad_file_gets_a_clear_problem(tmp_path, content, problem):
    sub = vet(write(tmp_path / "alice.ipynb", content), "alice.ipynb", None)
    assert sub.problem is not None and sub.problem.startswith("alice.ipynb: ")
    assert problem in sub.problem


def test_notebook_for_the_other_assignment_is_refused(tmp_path):
    sub = vet(write(tmp_path / "bob.ipynb", NOTEBOOK), "bob.ipynb", "autograd-porting")
    assert "is for 'autograd-exercises', not 'autograd-porting'" in sub.problem


def test_good_notebook_and_nested_folders(tmp_path):
    (tmp_path / "sec1").mkdir()
    write(tmp_path / "sec1" / "carol.ipynb", NOTEBOOK)
    write(tmp_path / "carol.ipynb", NOTEBOOK)
    found = find(tmp_path)
    assert [(s.name, s.assignment, s.problem) for s in found] == [
        ("carol.ipynb", "autograd-exercises", None),
        ("sec1/carol.ipynb", "autograd-exercises", None)]
