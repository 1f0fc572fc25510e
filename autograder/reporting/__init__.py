"""Reporting: renders what ``running`` wrote (result JSON, ``final_grades.csv``, timings) into
per-student feedback, a class report and gradebook exports. It never grades."""
