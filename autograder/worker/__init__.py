"""The untrusted side of the sealed judge.

Everything in this subpackage runs inside the worker process, next to the student's code, as an
unprivileged user: it must never import ``autograder.checks`` (the references) nor read the
hidden tests. It imports only the standard library, numpy and torch. What it sends back is plain
JSON that the judge decodes without evaluating anything; the judge treats it as untrusted data.
"""
