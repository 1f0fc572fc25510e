# kind: wrong
# public: fail
# feedback: This is 2*x, the gradient of v.sum(): the weights were ignored.
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_(True)
    v = leaf ** 2
    v.sum().backward()  # reduced to a scalar first, weights unused
    return leaf.grad


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
