# kind: wrong
# probe: probe.scaled
# feedback: the answer is off by a constant factor
# Divides the weighted sum by 3 "to keep the gradient small", a constant that is no count of x.
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    ((leaf.pow(2) * weights).sum() / 3).backward()
    return leaf.grad


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
