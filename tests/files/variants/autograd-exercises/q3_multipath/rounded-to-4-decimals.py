# kind: wrong
# public: pass
# feedback: rounded to 4 decimal
def multipath_grads(x0, y0):
    x = torch.tensor(float(x0), requires_grad=True)
    y = torch.tensor(float(y0), requires_grad=True)
    (x * y + x ** 2).backward()
    return round(x.grad.item(), 4), round(y.grad.item(), 4)


def split_path_grads(x0, y0):
    a = torch.tensor(float(x0), requires_grad=True)
    b = torch.tensor(float(x0), requires_grad=True)
    (a * float(y0) + b * b).backward()
    return round(a.grad.item(), 4), round(b.grad.item(), 4)


print(multipath_grads(3.0, 4.0))
print(split_path_grads(3.0, 4.0))
