"""Autograder for the lesson "PyTorch Tensors and Autograd for People Who Wrote Backprop by Hand".

Split by verb, imports flowing one way:

- ``autograder.authoring``: runs ``otter assign`` on the masters and normalises what it writes.
- ``autograder.checks``: pure functions, student callables in, ``CheckResult`` out.
- ``autograder.harness``: the bridge the masters' hidden tests call.
- ``autograder.running``: grades submissions and writes ``final_grades.csv``.
"""

__version__ = "0.1.0"
