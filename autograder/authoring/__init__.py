"""Authoring: turn the otter-assign masters into student templates, solutions and zips."""
