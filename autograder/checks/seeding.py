"""Grading seeds: every check draws its inputs from a generator made from one integer."""

from __future__ import annotations

import numpy as np


def generator(seed: int) -> np.random.Generator:
    """The generator a check draws its inputs from; same seed, same inputs."""
    return np.random.default_rng(seed)


def seed_of(rng: np.random.Generator) -> int | None:
    """The integer seed ``rng`` was made from, recorded in results to reproduce a grade."""
    entropy = rng.bit_generator.seed_seq.entropy
    return int(entropy) if isinstance(entropy, int) else None
