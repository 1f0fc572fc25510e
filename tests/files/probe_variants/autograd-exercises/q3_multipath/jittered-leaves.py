# kind: wrong
# probe: probe.nondeterministic
# feedback: the answer depends on torch's randomness
# The leaves get a random nudge "so that no gradient is exactly zero".
def multipath_grads(x0, y0):
    nudge = 1e-3 * torch.rand(2, dtype=torch.float64)
    x = (torch.tensor(float(x0), dtype=torch.float64) + nudge[0]).requires_grad_()
    y = (torch.tensor(float(y0), dtype=torch.float64) + nudge[1]).requires_grad_()
    (x * y + x * x).backward()
    return x.grad.item(), y.grad.item()


def split_path_grads(x0, y0):
    a = torch.tensor(float(x0), requires_grad=True)
    b = torch.tensor(float(x0), requires_grad=True)
    (a * float(y0) + b ** 2).backward()
    return a.grad.item(), b.grad.item()


print(multipath_grads(3.0, 4.0))
print(split_path_grads(3.0, 4.0))
