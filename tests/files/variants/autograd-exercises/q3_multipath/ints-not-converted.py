# kind: wrong
# public: fail
# feedback: Convert first: torch.tensor(float(x0), requires_grad=True).
def multipath_grads(x0, y0):
    x = torch.tensor(x0, requires_grad=True)  # an int x0 makes an int64 tensor
    y = torch.tensor(y0, requires_grad=True)
    (x * y + x ** 2).backward()
    return x.grad.item(), y.grad.item()


def split_path_grads(x0, y0):
    y = torch.tensor(float(y0))
    a = torch.tensor(float(x0), requires_grad=True)
    b = torch.tensor(float(x0), requires_grad=True)
    (a * y.detach() + b ** 2).backward()
    return a.grad.item(), b.grad.item()


print(multipath_grads(3.0, 4.0))
print(split_path_grads(3.0, 4.0))
