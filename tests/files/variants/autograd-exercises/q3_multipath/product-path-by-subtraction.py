# kind: wrong
# public: pass
# feedback: a.grad was computed by subtracting totals: x.grad - b.grad (the total minus the square path) in float32
def multipath_grads(x0, y0):
    x = torch.tensor(float(x0), requires_grad=True)
    y = torch.tensor(float(y0), requires_grad=True)
    (x * y + x ** 2).backward()
    return x.grad.item(), y.grad.item()


def split_path_grads(x0, y0):
    b = torch.tensor(float(x0), requires_grad=True)
    (b ** 2).backward()
    total = multipath_grads(x0, y0)[0]  # both paths together
    return total - b.grad.item(), b.grad.item()


print(multipath_grads(3.0, 4.0))
print(split_path_grads(3.0, 4.0))
