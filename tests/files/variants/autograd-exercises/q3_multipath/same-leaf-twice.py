# kind: wrong
# public: fail
# feedback: Both paths were built on one leaf, so it collected both contributions
def multipath_grads(x0, y0):
    x = torch.tensor(float(x0), requires_grad=True)
    y = torch.tensor(float(y0), requires_grad=True)
    (x * y + x ** 2).backward()
    return x.grad.item(), y.grad.item()


def split_path_grads(x0, y0):
    y = torch.tensor(float(y0))
    a = b = torch.tensor(float(x0), requires_grad=True)  # two names, one leaf
    (a * y + b ** 2).backward()
    return a.grad.item(), b.grad.item()


print(multipath_grads(3.0, 4.0))
print(split_path_grads(3.0, 4.0))
