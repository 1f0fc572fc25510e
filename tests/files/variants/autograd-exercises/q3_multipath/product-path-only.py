# kind: wrong
# public: fail
# feedback: x.grad holds the product path only: x also feeds x ** 2, whose gradient 2*x must be added.
def multipath_grads(x0, y0):
    x = torch.tensor(float(x0), requires_grad=True)
    y = torch.tensor(float(y0), requires_grad=True)
    w = x * y + x.detach() ** 2  # the square detached, as in the split exercise
    w.backward()
    return x.grad.item(), y.grad.item()


def split_path_grads(x0, y0):
    y = torch.tensor(float(y0))
    a = torch.tensor(float(x0), requires_grad=True)
    b = torch.tensor(float(x0), requires_grad=True)
    (a * y.detach() + b ** 2).backward()
    return a.grad.item(), b.grad.item()


print(multipath_grads(3.0, 4.0))
print(split_path_grads(3.0, 4.0))
