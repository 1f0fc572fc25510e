"""What the worker may still read after the uid drop: the import paths behind a folder the
sandbox uid cannot pass (``blocked_for_others``) reopened through ``/proc/self/fd``
(``reach_imports``), for the ``container`` confinement of a checkout under a private folder.

Standard library only; it runs in the jail, beside the worker's code.
"""

from __future__ import annotations

import os
import stat
import sys


def blocked_for_others(path: str) -> bool:
    """Whether a folder above ``path`` keeps other users from passing through it (no ``o+x``,
    as a 0700 ``mktemp -d`` or home folder does): the sandbox uid owns nothing and belongs to
    no group, so the "other" bits are what it gets."""
    folder = os.path.dirname(os.path.realpath(path))
    while os.stat(folder).st_mode & stat.S_IXOTH:
        if folder == os.sep:
            return False
        folder = os.path.dirname(folder)
    return True


def reach_imports() -> dict[str, str]:
    """Keep every import path usable after the uid drop where the project is checked out under
    a private folder (confinement ``container``: no jail, so the sandbox uid sees the real
    paths, and a 0700 parent stops it before the venv). For each entry of ``sys.path`` behind
    such a folder, open the folder itself here, as root, and import from
    ``/proc/self/fd/N`` from now on: the kernel checks a path through that link from the
    folder down only, so the venv's own world-readable files (torch's lazily loaded modules:
    ``torch._subclasses.schema_check_mode``, ``torch.distributions``, ...) load as they would
    anywhere, and nothing beside the venv becomes readable. Already imported packages'
    ``__path__``, ``__file__`` and loaders move too (lazy submodules are found through the
    parent package's ``__path__``, not ``sys.path``). Pre-importing torch's lazy modules instead
    would need a list that is never complete (students import what they like).
    Returns old prefix -> new prefix (empty where nothing is blocked: the grading image, a
    checkout under a 0755 folder)."""
    moved: dict[str, str] = {}
    for entry in dict.fromkeys(sys.path):
        if entry and os.path.isdir(entry) and blocked_for_others(entry):
            fd = os.open(entry, os.O_PATH | os.O_DIRECTORY)  # close-on-exec: this process only
            moved[entry.rstrip(os.sep)] = f"/proc/self/fd/{fd}"
    if not moved:
        return moved
    # longest first: a site-packages inside another moved folder keeps its own descriptor
    order = sorted(moved, key=len, reverse=True)

    def new(path):
        if not isinstance(path, str):
            return path
        for old in order:
            if path == old or path.startswith(old + os.sep):
                return moved[old] + path[len(old):]
        return path

    sys.path[:] = [new(p) for p in sys.path]
    for module in list(sys.modules.values()):
        # the module's own dict, never getattr: torch.ops and other lazy modules would make
        # up an attribute for any name asked
        names = getattr(module, "__dict__", None)
        if not isinstance(names, dict):
            continue
        if isinstance(names.get("__path__"), list):
            names["__path__"][:] = [new(p) for p in names["__path__"]]
        if isinstance(names.get("__file__"), str):
            names["__file__"] = new(names["__file__"])
        spec = names.get("__spec__")
        if spec is not None and not isinstance(spec, type):
            try:
                spec.origin = new(spec.origin)
                if isinstance(spec.submodule_search_locations, list):
                    spec.submodule_search_locations[:] = [
                        new(p) for p in spec.submodule_search_locations]
            except AttributeError:
                pass
        loader = names.get("__loader__")
        if isinstance(getattr(loader, "path", None), str):
            try:
                loader.path = new(loader.path)
            except AttributeError:
                pass
    sys.path_importer_cache.clear()
    return moved
