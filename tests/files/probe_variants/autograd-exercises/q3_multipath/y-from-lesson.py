# kind: wrong
# probe: probe.ignores-argument
# feedback: The answer does not follow y0
# y is a default left over from trying the lesson's example.
def multipath_grads(x0, y0, y_value=4.0):
    x = torch.tensor(float(x0), requires_grad=True)
    y = torch.tensor(y_value, requires_grad=True)
    (x * y + x ** 2).backward()
    return x.grad.item(), y.grad.item()


def split_path_grads(x0, y0):
    a = torch.tensor(float(x0), requires_grad=True)
    b = torch.tensor(float(x0), requires_grad=True)
    (a * float(y0) + b ** 2).backward()
    return a.grad.item(), b.grad.item()


print(multipath_grads(3.0, 4.0))
print(split_path_grads(3.0, 4.0))
