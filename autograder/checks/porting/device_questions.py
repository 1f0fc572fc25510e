"""Which question ``pick_device`` asked torch, for the words of a failure (blind round zzi).

``torch.cuda.is_initialized()`` ("CUDA is set up and ready") is False until the process has
used CUDA, so a ``pick_device`` that asks it never picks cuda; ``torch.version.cuda``, the
build flags (``torch.backends.cuda.is_built()``, ``torch.backends.mps.is_built()``, cuDNN's),
``torch.backends.cudnn.enabled`` (a setting, True on any machine) and ``CUDA_VISIBLE_DEVICES``
likewise say something other than whether a device is there. The worker hears which of them a
call asked (``worker/asked_devices.py``); what it says is untrusted, cleaned by the judge
(``running/judge/reports.py``), and chooses words only: the points come from the returned
devices, judged before any of this.

Only a ``pick_device`` that already failed is asked again, under the four availabilities with
those questions answering as availability would (``as_available``): when every answer then
comes right, the questions heard are told as the cause. Otherwise they are told as what was
heard, and only those about a device no right question was asked about (a ``pick_device``
that asks ``is_available()`` and ``is_built()`` failed for another reason).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import torch

from ..calling import call_observed
from ..context import call_context

CASES = ((True, True), (True, False), (False, True), (False, False))
_NO_GPU = "not whether a GPU is there"
_MPS_BUILT = "says whether this PyTorch was built with MPS, not whether this machine can use it"
_VISIBLE = (f"is an environment variable that, when someone sets it, chooses which GPUs a "
            f"process may see, {_NO_GPU}")
_TOOLKIT = f"is an environment variable naming where a CUDA toolkit is installed, {_NO_GPU}"

#: the questions that do not say whether a device is there: (device, what each says)
MEANINGS: dict[str, tuple[str, str]] = {
    "torch.cuda.is_initialized()": ("cuda", f"says whether this process has used CUDA yet, "
                                            f"{_NO_GPU}"),
    "torch.cuda.is_bf16_supported()": ("cuda", f"says whether the GPU in use computes in "
                                               f"bfloat16, {_NO_GPU}"),
    "torch.backends.cudnn.is_available()": ("cuda", f"says whether this PyTorch build includes "
                                                    f"cuDNN, {_NO_GPU}"),
    "torch.backends.cudnn.enabled": ("cuda", f"is a setting (whether PyTorch may use cuDNN), "
                                             f"True by default on any machine, {_NO_GPU}"),
    "torch.backends.cuda.is_built()": ("cuda", f"says whether this PyTorch was built with CUDA, "
                                               f"{_NO_GPU}"),
    "torch.version.cuda": ("cuda", f"is the CUDA version this PyTorch was built with (None for "
                                   f"a CPU-only build), {_NO_GPU}"),
    "torch.has_cuda": ("cuda", f"says whether this PyTorch was built with CUDA (deprecated for "
                               f"torch.backends.cuda.is_built()), {_NO_GPU}"),
    "torch.has_cudnn": ("cuda", f"says whether this PyTorch build includes cuDNN, {_NO_GPU}"),
    "torch.backends.mps.is_built()": ("mps", _MPS_BUILT),
    "torch.has_mps": ("mps", _MPS_BUILT),
    "os.environ['CUDA_VISIBLE_DEVICES']": ("cuda", _VISIBLE),
    "os.environ['NVIDIA_VISIBLE_DEVICES']": ("cuda", _VISIBLE),
    "os.environ['CUDA_HOME']": ("cuda", _TOOLKIT),
    "os.environ['CUDA_PATH']": ("cuda", _TOOLKIT),
}
_ACCELERATOR = {"torch.accelerator.is_available()", "torch.accelerator.device_count()",
                "torch.accelerator.current_accelerator()",
                "torch.accelerator.current_device_index()"}
#: the questions that do say it, for each device
ANSWERING = {"cuda": {"torch.cuda.is_available()", "torch.cuda.device_count()",
                      "torch.cuda.current_device()", *_ACCELERATOR},
             "mps": {"torch.backends.mps.is_available()", *_ACCELERATOR}}
RIGHT = {"cuda": "torch.cuda.is_available()", "mps": "torch.backends.mps.is_available()"}


class Heard(NamedTuple):
    """The questions to tell, and whether answering them as availability made every answer
    right (then they are the cause)."""

    asked: tuple[str, ...]
    confirmed: bool

    def sentence(self) -> str:
        """What was heard, and, when confirmed, what the second look established."""
        told = "; and ".join(f"{q}, which {MEANINGS[q][1]}" for q in self.asked)
        said = f"As your process reported, pick_device asked {told}."
        if not self.confirmed:
            return said
        these = "that question" if len(self.asked) == 1 else "those questions"
        return (f"{said} Asked again with {these} answering as the simulated availability "
                "does, it chose right every time.")

    def fix(self) -> str:
        """The right question for each device told."""
        devices = [d for d in RIGHT if any(MEANINGS[q][0] == d for q in self.asked)]
        return f"Ask {' and '.join(RIGHT[d] for d in devices)} instead, each time you are called."

    def probe(self) -> dict[str, Any]:
        return {"id": "device-question", "asked": list(self.asked),
                "established": "every answer right with these answering as availability"
                if self.confirmed else "heard only"}


def _right(got: Any, cuda: bool, mps: bool) -> bool:
    expected = "cuda" if cuda else "mps" if mps else "cpu"
    return isinstance(got, torch.device) and got.type == expected and got.index in (None, 0)


def heard_questions(pick_device: Callable) -> Heard | None:
    """``pick_device`` asked again under every availability, the questions that do not say
    whether a device is there answering as if they did: what it asked of those, or ``None``."""
    heard: list[str] = []
    right = True
    for cuda, mps in CASES:
        with call_context(simulate_devices={"cuda": cuda, "mps": mps, "as_available": True}):
            got, observed, failure = call_observed(pick_device, "pick_device")
        asked = observed.get("devices_asked")
        heard += [q for q in (asked if isinstance(asked, list) else [])
                  if isinstance(q, str) and q not in heard]
        right = right and failure is None and _right(got, cuda, mps)
    wrong = [q for q in heard if q in MEANINGS]
    if not right:  # heard only: not about a device a right question was asked about
        wrong = [q for q in wrong if not ANSWERING[MEANINGS[q][0]] & set(heard)]
    return Heard(tuple(wrong), right) if wrong else None
