# kind: correct
# public: pass
# feedback:
def multipath_grads(x0, y0):
    x, y = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (x0, y0))
    gx, gy = torch.autograd.grad(x * y + x.pow(2), [x, y])
    return float(gx), float(gy)


def split_path_grads(x0, y0):
    a, b = (torch.tensor(x0, dtype=torch.float64).requires_grad_() for _ in range(2))
    w = a * float(y0) + b * b
    w.backward()
    return float(a.grad), float(b.grad)


print(multipath_grads(3.0, 4.0))
print(split_path_grads(3.0, 4.0))
