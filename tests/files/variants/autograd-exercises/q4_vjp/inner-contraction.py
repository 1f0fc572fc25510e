# kind: wrong
# public: pass
# feedback: the weights were combined across entries (a contraction such as torch.inner(weights, v).sum()
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    v = leaf ** 2
    torch.inner(weights, v).sum().backward()  # the weighted sum for 1-D; mixes rows for 2-D
    return leaf.grad


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
