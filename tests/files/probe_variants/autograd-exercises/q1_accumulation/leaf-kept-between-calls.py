# kind: wrong
# probe: probe.depends-on-history
# feedback: depends on something besides the arguments that changes from one call to the next
# One leaf per p0, kept in a module-level dict "to save work": a second call with the same p0
# starts from the gradient the first call left behind.
_leaves = {}


def square_grads(p0, repeats, clear):
    p = _leaves.setdefault(p0, torch.tensor(p0, requires_grad=True))
    grads = []
    for _ in range(repeats):
        if clear:
            p.grad = None
        (p ** 2).backward()
        grads.append(p.grad.item())
    return grads


uncleared = square_grads(2.0, 3, clear=False)
cleared = square_grads(2.0, 3, clear=True)

q = torch.tensor(2.0, requires_grad=True) ** 2
q.backward()
try:
    q.backward()
except RuntimeError:
    reuse_raises = True
else:
    reuse_raises = False
