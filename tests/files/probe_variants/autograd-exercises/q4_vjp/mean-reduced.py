# kind: wrong
# probe: probe.scaled
# feedback: the answer is off by a constant factor
# The weighted output is averaged rather than backpropagated as a vector.
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf.pow(2) * weights).mean().backward()
    return leaf.grad


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
