"""The in-container entry points, each run as ``python -m``: ``container`` (one job of the
``docker`` runner), ``judge_service`` (the ``docker-fork`` judge), ``run_autograder`` (the
Gradescope / ``otter grade`` zip), ``pod`` (one shard in a pod or batch job), ``prairielearn``
(PrairieLearn's external grader).
"""
