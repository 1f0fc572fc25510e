# kind: correct
# public: pass
# feedback:
def multipath_grads(x0, y0):
    x = torch.tensor(float(x0), requires_grad=True)
    y = torch.tensor(float(y0), requires_grad=True)
    gx, gy = torch.autograd.grad(x * y + x * x, (x, y))
    return gx.item(), gy.item()


def split_path_grads(x0, y0):
    # float32 leaves, y a plain Python float: each path's gradient read from its own leaf
    a = torch.tensor(float(x0), requires_grad=True)
    b = torch.tensor(float(x0), requires_grad=True)
    ga, gb = torch.autograd.grad(a * float(y0) + b.pow(2), (a, b))
    return ga.item(), gb.item()


print(multipath_grads(3.0, 4.0))
print(split_path_grads(3.0, 4.0))
