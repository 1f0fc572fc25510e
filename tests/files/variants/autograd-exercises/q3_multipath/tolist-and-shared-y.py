# kind: correct
# public: pass
# feedback:
def multipath_grads(x0, y0):
    x = torch.tensor([x0], dtype=torch.float32).requires_grad_()
    y = torch.tensor([y0], dtype=torch.float32).requires_grad_()
    w = (x * y + x ** 2).sum()
    w.backward()
    return tuple(g.grad.tolist()[0] for g in (x, y))


def split_path_grads(x0, y0):
    y = torch.tensor(float(y0), requires_grad=True)
    leaves = [torch.tensor(float(x0), requires_grad=True) for _ in range(2)]
    a, b = leaves
    (a * y.detach() + b ** 2).backward()
    return leaves[0].grad.item(), leaves[1].grad.item()


print(multipath_grads(3.0, 4.0))
print(split_path_grads(3.0, 4.0))
