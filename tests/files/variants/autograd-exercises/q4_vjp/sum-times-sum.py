# kind: wrong
# public: fail
# feedback: weights.sum() * v.sum() multiplies the totals, so every entry gets the same, total weight
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    v = leaf ** 2
    (weights.sum() * v.sum()).backward()
    return leaf.grad


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
