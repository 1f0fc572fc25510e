# kind: wrong
# probe: none
# feedback: Checked without finding the cause
# A wrong expression no probe can locate: the square path is weighted by y / 2.
def multipath_grads(x0, y0):
    x = torch.tensor(float(x0), requires_grad=True)
    y = torch.tensor(float(y0), requires_grad=True)
    (x * y + x ** 2 * y.detach() / 2).backward()
    return x.grad.item(), y.grad.item()


def split_path_grads(x0, y0):
    a = torch.tensor(float(x0), requires_grad=True)
    b = torch.tensor(float(x0), requires_grad=True)
    (a * float(y0) + b ** 2).backward()
    return a.grad.item(), b.grad.item()


print(multipath_grads(3.0, 4.0))
print(split_path_grads(3.0, 4.0))
