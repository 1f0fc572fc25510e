# kind: wrong
# probe: vjp-averaged
# feedback: reduced by a mean where the vector-Jacobian product needs a sum
# The weighted output is averaged rather than backpropagated as a vector.
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf.pow(2) * weights).mean().backward()
    return leaf.grad


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
