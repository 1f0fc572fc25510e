"""Running: find submissions, grade each one, collect per-question scores."""
