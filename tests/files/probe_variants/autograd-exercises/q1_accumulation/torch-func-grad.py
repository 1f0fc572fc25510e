# kind: correct
# probe: none
# feedback:
# Unusual but right: the gradient of p ** 2 from torch.func, accumulated by hand.
from torch.func import grad as func_grad


def square_grads(p0, repeats, clear):
    step = func_grad(lambda p: p ** 2)(torch.tensor(p0, dtype=torch.float64)).item()
    total, out = 0.0, []
    for _ in range(repeats):
        total = step if clear else total + step
        out.append(float(total))
    return out


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
