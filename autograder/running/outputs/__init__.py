"""What a grading run writes under ``OUT``, one module per file, each file's reader beside its
writer: ``final_grades`` (``<a>/final_grades.csv``), ``grading_json`` (``grading.json``),
``timings`` (``<a>/timings.json``), ``roster`` (the staff's roster, and
``not_submitted.csv``), ``unplaced`` (``unplaced.csv``), ``written_questions``
(``<a>/written/questions.json``), and ``cells``, the rule every CSV of ours writes its cells
by, and ``results`` (the folder of result documents, ``<a>/results/``: each one a
``resultdoc.ResultDoc``, read back one at a time). The batch writes them; the reports and ``autograder merge`` read them back from here.
"""
