"""Checks for the ``autograd-porting`` assignment."""

from __future__ import annotations

from ..registry import Check, index

ASSIGNMENT = "autograd-porting"

CHECKS = index([])
