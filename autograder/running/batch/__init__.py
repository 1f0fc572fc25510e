"""The batch: ``folder.grade_folder`` grades a folder of submissions with a runner, ``selection``
picks what a partial run grades, ``grades_csv`` writes ``final_grades.csv``, ``progress`` shows
it, ``roster`` says whose a file is, ``shards`` and ``merge`` split a run and join it again.
"""
