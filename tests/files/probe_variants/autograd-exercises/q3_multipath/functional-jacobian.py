# kind: correct
# probe: none
# feedback:
# Unusual but right: both gradients at once from torch.autograd.functional.jacobian.
from torch.autograd.functional import jacobian


def multipath_grads(x0, y0):
    point = torch.tensor([x0, y0], dtype=torch.float64)
    gx, gy = jacobian(lambda v: v[0] * v[1] + v[0] ** 2, point).tolist()
    return float(gx), float(gy)


def split_path_grads(x0, y0):
    a = torch.tensor(float(x0), requires_grad=True)
    b = torch.tensor(float(x0), requires_grad=True)
    (a * float(y0) + b ** 2).backward()
    return a.grad.item(), b.grad.item()


print(multipath_grads(3.0, 4.0))
print(split_path_grads(3.0, 4.0))
