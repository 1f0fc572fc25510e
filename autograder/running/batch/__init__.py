"""The batch: ``folder.grade_folder`` grades a folder of submissions with a runner (its
``options.Options``; each assignment a ``group.Group``), ``selection`` picks what a partial run
grades, ``progress`` shows it, ``written_answers`` copies the written answers into the
documents, ``shards`` and ``merge`` split a run and join it again. What a run writes is
``running.outputs``'.
"""
