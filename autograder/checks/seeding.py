"""Grading seeds: every check draws its inputs from a generator made from one integer."""

from __future__ import annotations

import hashlib

import numpy as np


def generator(seed: int) -> np.random.Generator:
    """The generator a check draws its inputs from; same seed, same inputs."""
    return np.random.default_rng(seed)


def seed_of(rng: np.random.Generator) -> int | None:
    """The integer seed ``rng`` was made from, recorded in results to reproduce a grade."""
    entropy = rng.bit_generator.seed_seq.entropy
    return int(entropy) if isinstance(entropy, int) else None


def submission_seed(run_seed: int, identity: str) -> int:
    """The seed one submission's hidden inputs are drawn from: a pure function of the run's
    seed and the submission's identity (its roster id when known, else its path).

    Two students in one run never draw the same inputs (so one student's feedback tells the
    others nothing about theirs), yet any one grade is reproduced alone from the run's seed
    (``--only``). SHA-256, not ``hash()``: Python salts ``hash`` of strings per process.
    """
    from ..running.names import name_bytes  # the one rule for a name's bytes (never raises)

    digest = hashlib.sha256(f"{int(run_seed)}\0".encode() + name_bytes(identity)).digest()
    return int.from_bytes(digest[:4], "big") >> 1  # below 2**31, like a run's seed


def attempt_seed(base: int, notebook: bytes, attempt: str = "") -> int:
    """The seed of one attempt on a platform where students resubmit and see the feedback
    (PrairieLearn, Gradescope): a pure function of ``base`` (the variant's seed), the notebook's
    own bytes and the platform's record of the attempt (``attempt``: its id and time).

    A changed notebook or a new attempt draws new hidden inputs, so what one attempt's feedback
    shows (its inputs, the expected values) is no answer key for the next; a regrade of one
    attempt (the same file and record) draws the same inputs again. A notebook cannot carry the
    answers for its own inputs: they depend on every byte of it.
    """
    digest = hashlib.sha256(notebook).hexdigest()
    return submission_seed(base, f"attempt\0{digest}\0{attempt}")
