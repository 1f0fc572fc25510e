# kind: wrong
# public: pass
# feedback: b.grad was computed by subtracting totals: x.grad - a.grad (the total minus the product path) in float32
def multipath_grads(x0, y0):
    x = torch.tensor(float(x0), requires_grad=True)
    y = torch.tensor(float(y0), requires_grad=True)
    (x * y + x ** 2).backward()
    return x.grad.item(), y.grad.item()


def split_path_grads(x0, y0):
    # the product path on its own leaf, the square path as what is left of the total
    y = torch.tensor(float(y0))
    x = torch.tensor(float(x0), requires_grad=True)
    (x * y + x ** 2).backward()
    a = torch.tensor(float(x0), requires_grad=True)
    (a * y).backward()
    b_grad = x.grad - a.grad
    return a.grad.item(), b_grad.item()


print(multipath_grads(3.0, 4.0))
print(split_path_grads(3.0, 4.0))
