# kind: wrong
# public: pass
# feedback: These are the lesson's gradients for (3, 4): make the leaves from the x0 and y0 arguments.
def multipath_grads(x0, y0):
    x = torch.tensor(float(x0), requires_grad=True)
    y = torch.tensor(float(y0), requires_grad=True)
    (x * y + x ** 2).backward()
    return x.grad.item(), y.grad.item()


def split_path_grads(x0, y0):
    y = torch.tensor(4.0)  # copied from the lesson's example
    a = torch.tensor(3.0, requires_grad=True)
    b = torch.tensor(3.0, requires_grad=True)
    (a * y.detach() + b ** 2).backward()
    return a.grad.item(), b.grad.item()


print(multipath_grads(3.0, 4.0))
print(split_path_grads(3.0, 4.0))
