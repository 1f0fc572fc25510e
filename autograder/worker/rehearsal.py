"""A rehearsal the zygote runs once, before it forks any worker: a small notebook of the
lesson's kind (a custom autograd function, ``gradcheck``, a training loop, saved-tensor
hooks) graded through the worker's own request handler and wire, on values of its own.

What it warms is what every forked worker would otherwise pay for on its first call, each
time: torch's first-call paths (the dispatcher's Python caches, the autograd engine's,
``gradcheck``'s lazy imports, the optimizers' step code), the wire's encoders and decoders,
and the interpreter's specialised bytecode for all of them. A fork inherits it.

Nothing here comes from a submission, a hidden test or a seed: the zygote rehearses before the
judge reads any of them, and what it leaves behind is torch's and the worker's own state
(``Worker``'s namespace is dropped, torch's random generator is put back as it was).
"""

from __future__ import annotations

import json

import torch
from torch import nn

from . import wire
from .main import Worker

CELL = '''
import numpy as np
import torch
from torch import nn


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad_output


def gradients(x, model, scale):
    loss = (model(x) ** 2).mean() * scale
    loss.backward()
    return [p.grad for p in model.parameters()]


def train(model, x, y, steps):
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.binary_cross_entropy_with_logits(model(x).squeeze(-1), y)
        loss.backward()
        opt.step()
    with torch.no_grad():
        return model(x).sigmoid().squeeze(-1)


def check(x):
    cube = torch.autograd.gradcheck(Cube.apply, (x,), eps=1e-6, atol=1e-8)
    return cube, Cube.apply(x).sum(), x.detach().numpy() * 2, [1, 2.5, "a"], {"k": (1,)}


def adam(model):
    return torch.optim.Adam(model.parameters(), lr=0.01)
'''


def rehearse() -> None:
    """Grade the rehearsal notebook once through ``Worker`` and the wire, both ways, on one
    thread (a process that forks must not start any: torch's pool stays unstarted), leaving
    torch's random generator as it found it: a worker's unseeded draws are what they would be
    without the rehearsal."""
    threads, generator = torch.get_num_threads(), torch.random.get_rng_state()
    torch.set_num_threads(1)
    try:
        _rehearse()
    finally:
        torch.set_num_threads(threads)
        torch.random.set_rng_state(generator)


def _rehearse() -> None:
    worker = Worker()
    worker.run_cells([[0, CELL]])
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Tanh(), nn.Linear(4, 1))
    x = torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(2, 3).requires_grad_()
    y = torch.tensor([0.0, 1.0])
    calls = [
        ("gradients", [x.float().detach().requires_grad_(), model, 0.5], {}),
        ("train", [model, x.detach().float(), y, 3], {"torch_seed": 1}),
        ("check", [x[0].detach().clone().requires_grad_()], {"count_saved_tensors": True}),
        ("adam", [model], {}),
    ]
    for target, args, context in calls:
        worker.lookup(target)
        reply = worker.call(target, [wire.encode(a) for a in args], {}, context,
                            backward=None)
        text = json.dumps(reply, allow_nan=False)
        wire.decode(json.loads(text).get("ok", {"t": "none"}), budget=wire.Budget())
    square = worker.call("Cube.apply", [wire.encode(x)], {}, {},
                         backward=wire.encode(torch.ones(2, 3, dtype=torch.float64)))
    for state in square["args_after"]:
        if state.get("t") != "unchanged":
            wire.decode_tensor(state, budget=wire.Budget())
