"""pick_device asked in any of torch's documented ways: each is simulated alike.

Blind round zp's ``torch.device("cuda", torch.cuda.current_device())`` raised under a
simulated GPU on a CPU build and lost the point, and ``torch.cuda.device_count() > 0`` was
told it never picked cuda: both are right answers on a real machine. The simulation answers
``device_count``, ``current_device``, ``mps.is_built`` and ``torch.accelerator`` as it answers
``is_available``.
"""

import numpy as np
import pytest
import torch

from autograder.checks.porting import device
from test_observations import Loopback


def by_count():
    if torch.cuda.device_count() > 0:
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def by_current_device():
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("mps" if torch.backends.mps.is_available() else "cpu")


def mps_built_and_available():  # PyTorch's MPS page asks both
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_built() and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def by_accelerator():
    found = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else None
    return found if found is not None else torch.device("cpu")


def cuda_index_from_count():
    if torch.cuda.is_available() and torch.cuda.device_count():
        return torch.device(f"cuda:{torch.cuda.device_count() - 1}")
    return torch.device("mps") if torch.backends.mps.is_available() else torch.device("cpu")


#: torch's own functions, held before any call (blind round zzu: a correct pick_device that
#: looped over such a tuple picked cpu under every simulated availability)
PROBES = (("cuda", torch.cuda.is_available), ("mps", torch.backends.mps.is_available))


def by_probes_held():
    for name, available in PROBES:
        if available():
            return torch.device(name)
    return torch.device("cpu")


STYLES = [by_count, by_current_device, mps_built_and_available, by_accelerator,
          cuda_index_from_count, by_probes_held]
SOURCE = {fn.__name__: f"import torch\n\n{__import__('inspect').getsource(fn)}"
          for fn in STYLES}
SOURCE["by_probes_held"] = ("import torch\n\nPROBES = ((\"cuda\", torch.cuda.is_available), "
                            "(\"mps\", torch.backends.mps.is_available))\n\n"
                            + __import__("inspect").getsource(by_probes_held))


def _untouched():
    return (torch.cuda.is_available, torch.cuda.device_count, torch.cuda.current_device,
            torch.backends.mps.is_available, torch.backends.mps.is_built,
            torch.accelerator.current_accelerator, torch.accelerator.is_available)


@pytest.mark.parametrize("style", STYLES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_way_of_asking_is_simulated(style, seed):
    before = _untouched()
    result = device.check_pick_device(style, np.random.default_rng(seed))
    assert result.passed, result.message
    assert _untouched() == before


@pytest.mark.parametrize("name", [fn.__name__ for fn in STYLES])
def test_each_way_of_asking_is_simulated_in_the_worker(name):
    fn = Loopback(SOURCE[name]).function(name)
    result = device.check_pick_device(fn, np.random.default_rng(11))
    assert result.passed, result.message


def test_torch_answers_as_before_once_the_call_ends():
    """The functions' own code is put back, and mps's cached answer forgotten: after a
    simulated call, torch answers for this machine again."""
    truth = (torch.cuda.is_available(), torch.backends.mps.is_available(),
             torch.cuda.device_count())
    codes = [f.__code__ for f in (torch.cuda.is_available, torch.cuda.device_count,
                                  torch.backends.mps.is_available.__wrapped__)]
    assert device.check_pick_device(by_probes_held, np.random.default_rng(0)).passed
    assert (PROBES[0][1](), PROBES[1][1](), torch.cuda.device_count()) == truth
    assert codes == [f.__code__ for f in (torch.cuda.is_available, torch.cuda.device_count,
                                          torch.backends.mps.is_available.__wrapped__)]


def test_a_gpu_asked_for_when_none_is_simulated_raises_as_on_a_machine_without_one():
    """current_device() where no GPU is simulated raises (on any build), so an answer that
    asks it first still fails, and the mistake is not hidden by the simulation."""
    def current_first():
        return torch.device("cuda", torch.cuda.current_device())

    result = device.check_pick_device(current_first, np.random.default_rng(0))
    assert not result.passed and "raised" in result.message, result.message


def test_is_built_alone_still_picks_mps_where_it_is_not_available():
    """is_built() says the build has MPS, not that this Mac can use it: the simulation answers
    True there, so an answer that asks it instead of is_available() fails (rounds c, zd)."""
    def built_only():
        if torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("mps" if torch.backends.mps.is_built() else "cpu")

    result = device.check_pick_device(built_only, np.random.default_rng(0))
    assert not result.passed, result.message
