# kind: wrong
# public: fail
# feedback: a.grad and b.grad are swapped: a carries the product path (a * y) and gets y0, b carries the square (b ** 2) and gets 2*x0.
def multipath_grads(x0, y0):
    x = torch.tensor(float(x0), requires_grad=True)
    y = torch.tensor(float(y0), requires_grad=True)
    (x * y + x ** 2).backward()
    return x.grad.item(), y.grad.item()


def split_path_grads(x0, y0):
    y = torch.tensor(float(y0))
    a = torch.tensor(float(x0), requires_grad=True)
    b = torch.tensor(float(x0), requires_grad=True)
    (b * y + a ** 2).backward()  # square on a, product on b
    return a.grad.item(), b.grad.item()


print(multipath_grads(3.0, 4.0))
print(split_path_grads(3.0, 4.0))
