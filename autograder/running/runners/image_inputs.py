"""Whether a grading image was built from this checkout: the hash of what an image is built from
(``docker/build_image.py`` writes it as a label), and the comparison every command that grades
in a container makes before any work (``registry.resolve``).

An image built before a check was added runs the old checks: a hidden test naming the new one
would fail inside it. So a container runner never grades with an image whose label differs from
this checkout's sources; it refuses in one line naming the fix (``make image``).
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

#: The image label holding the hash of what it was built from (``inputs_digest``).
INPUTS_LABEL = "autograder.inputs-sha256"
#: The checkout this package was installed from (``pip install -e .``): the image's sources.
CHECKOUT = Path(__file__).resolve().parents[3]


def source_files(root: Path) -> list[Path]:
    """What our wheel and the image are made of, in a stable order (no caches)."""
    files = [root / "pyproject.toml", root / "docker" / "Dockerfile",
             root / "docker" / "requirements.lock"]
    files += sorted(p for p in (root / "autograder").rglob("*")
                    if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")
    return files


def torch_specs(root: Path) -> dict[str, str]:
    """The torch requirement of each variant (``docker/torch_wheel.py``: stdlib only)."""
    spec = importlib.util.spec_from_file_location("_torch_wheel", root / "docker" / "torch_wheel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {"cpu": module.CPU_SPEC, "cuda": f"torch=={module.VERSION}"}


def inputs_digest(variant: str, root: Path = CHECKOUT) -> str:
    """SHA-256 of everything the image is built from: the sources above (path and bytes), the
    variant and its torch spec. Same digest, same image: the build would be all cache hits."""
    h = hashlib.sha256(f"{variant}\0{torch_specs(root)[variant]}\0".encode())
    for path in source_files(root):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def stale(client, image: str, variant: str, root: Path = CHECKOUT) -> str | None:
    """Why ``image`` must not grade for this checkout (one line), or ``None``: it was built
    from other sources (its label differs from ``inputs_digest``). A package installed without
    its checkout (no ``docker/``) has nothing to compare: ``None``."""
    if not (root / "docker" / "Dockerfile").is_file():
        return None
    labels = client.images.get(image).labels or {}
    built = labels.get(INPUTS_LABEL)
    if built == inputs_digest(variant, root):
        return None
    make = "make image" + ("-gpu" if variant == "cuda" else "")
    return (f"the grading image {image} was built from other sources than {root} "
            f"(inputs {str(built)[:12]}, the checkout's {inputs_digest(variant, root)[:12]}): "
            f"it would grade with the old checks; run `{make}` (or `make grade`, which "
            f"rebuilds it), or grade with --runner sealed")
