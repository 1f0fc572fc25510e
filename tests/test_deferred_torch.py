"""torch's heavy lazy imports deferred (``autograder.worker.deferred_torch``), each test in a fresh
interpreter (the stand-ins replace entries of ``sys.modules``): every stand-in answers as
the real function does, anything else loads the real module, and a compile after them works
as in plain torch."""

from __future__ import annotations

import os
import subprocess
import sys

from notebooks import ROOT


def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_every_stand_in_answers_as_the_real_function_on_plain_values_and_hands_on_the_rest():
    """Each stand-in against the real function (imported beside it under another name) on
    plain values and on values it must hand on: the same answer, or the same exception."""
    out = _python(r'''
import importlib.util, sys, torch
from autograder.worker import deferred_torch as d
real = {}
for name in d.DEFERRED[:2]:  # the real modules, loaded under their own names, then set aside
    real[name] = importlib.import_module(name)
    del sys.modules[name]
    parent, _, child = name.rpartition(".")
    delattr(sys.modules[parent], child)
for name in [m for m in sys.modules if m == "sympy" or m.startswith("sympy.")]:
    del sys.modules[name]  # loaded by the two above: sympy's stand-in has its own test
d.install()
values = [True, False, 0, 3, -2, 2.5, (), (1, 2), [1, 2], (1, 2, 3), torch.Size([2, 3]),
          [2, 3], (True, 1), ((1, 2), (1, 2)), None, "s", torch.tensor(1)]
checked = 0
for module, names in d.STAND_INS.items():
    if module == d.SYMPY:
        continue
    for name, stand_in in names.items():
        if name in ("graph_break", "disable"):
            continue
        for x in values:
            args = [(x,), (x, True), (x, x), (x, (1, 2)), (x, 3)]
            if name in ("sym_eq",):
                args = [(x, y) for y in values]
            for a in args:
                try:
                    want = ("ok", getattr(real[module], name)(*a))
                except Exception as exc:
                    want = ("raised", type(exc))
                try:
                    got = ("ok", stand_in(*a))
                except Exception as exc:
                    got = ("raised", type(exc))
                if want[0] == "ok" and got[0] == "ok":
                    assert type(got[1]) is type(want[1]) and got[1] == want[1], (name, a, got, want)
                else:
                    assert got == want, (name, a, got, want)
                checked += 1
print(checked)
''')
    assert int(out) > 500


def test_an_optimizer_and_a_backward_with_a_gradient_load_nothing_and_give_the_same_bits():
    code = r'''
import sys, torch
{install}
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
for opt in (torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9),
            torch.optim.Adam(net.parameters(), lr=0.01)):
    for _ in range(3):
        opt.zero_grad()
        out = net(torch.randn(8, 5))
        out.backward(torch.ones_like(out) / 8)
        opt.step()
x = torch.randn(3, device="meta") * 2 + 1  # the meta device's reference kernels
print(torch.cat([p.detach().flatten() for p in net.parameters()]).double().tolist(),
      tuple(x.shape), [type(sys.modules[m]).__name__ for m in
                       ("torch._dynamo", "torch.fx.experimental.symbolic_shapes", "sympy")])
'''
    plain = _python(code.format(install="import torch._dynamo, "
                                        "torch.fx.experimental.symbolic_shapes, sympy"))
    deferred = _python(code.format(install="from autograder.worker import deferred_torch\n"
                                           "assert deferred_torch.install()"))
    assert plain.endswith("['module', 'module', 'module']")
    assert deferred.endswith("['Deferred', 'Deferred', 'Deferred']")
    assert plain.rsplit(" [", 1)[0] == deferred.rsplit(" [", 1)[0]


def test_a_compile_after_the_stand_ins_loads_the_real_dynamo_and_works():
    """``torch.compile`` (a student may), then the optimizer's methods that were first
    called through the stand-in ``disable``: everything goes through the real ``torch._dynamo``
    once it is loaded, and its submodules are one module each, not executed twice."""
    out = _python(r'''
import sys, torch
from autograder.worker import deferred_torch
assert deferred_torch.install()
net = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
net(torch.ones(2, 3)).sum().backward(); opt.step(); opt.zero_grad()
compiled = torch.compile(lambda x: torch.sin(x) * 2, backend="eager")
x = torch.linspace(0, 1, 5)
assert torch.equal(compiled(x), torch.sin(x) * 2)
import torch._dynamo.config as config
from torch._dynamo import eval_frame
real = sys.modules["torch._dynamo"]
assert type(real).__name__ == "module" and torch._dynamo is real
assert sys.modules["torch._dynamo.config"] is config is real.config
assert eval_frame.config is config and config.__spec__.name == "torch._dynamo.config"
net(torch.ones(2, 3)).sum().backward(); opt.step(); opt.zero_grad()
from torch.fx.experimental.symbolic_shapes import ShapeEnv
assert type(sys.modules["torch.fx.experimental.symbolic_shapes"]).__name__ == "module"
print(ShapeEnv.__module__)
''')
    assert out == "torch.fx.experimental.symbolic_shapes"


def test_sympys_stand_in_answers_type_tests_and_gives_way_to_the_real_sympy():
    """Before sympy is loaded, no value is a ``sympy.Basic`` (the meta device's kernels ask
    only that); a student's ``import sympy`` gets every name of the real one, and from then on
    the stand-in's ``Basic`` (held by whoever imported the stand-in) is the real class and
    answers as it does."""
    out = _python(r'''
import sys, torch
from autograder.worker import deferred_torch
assert deferred_torch.install()
import sympy
stand_in = sympy
assert type(stand_in).__name__ == "Deferred"
assert not isinstance(3, sympy.Basic) and not isinstance(torch.ones(1), sympy.Basic)
assert not issubclass(int, sympy.Basic)
y = torch.ones(3, device="meta") * 2.5  # elementwise_dtypes' type test, sympy not loaded
assert type(sys.modules["sympy"]).__name__ == "Deferred"
x = sympy.Symbol("x")  # any other name: the real sympy
import sympy.core.kind
real = sys.modules["sympy"]
assert type(real).__name__ == "module" and real.core.kind is sys.modules["sympy.core.kind"]
assert stand_in.Basic is real.Basic and isinstance(x, stand_in.Basic)
assert isinstance(x + 1, deferred_torch.Basic) and issubclass(real.Add, deferred_torch.Basic)
assert not isinstance(2, deferred_torch.Basic)
print(sympy.expand((x + 1) ** 2))
''')
    assert out == "x**2 + 2*x + 1"
