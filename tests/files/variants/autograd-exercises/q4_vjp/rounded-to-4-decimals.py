# kind: wrong
# public: pass
# feedback: rounded to 4 decimal
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_()
    (leaf ** 2).backward(weights)
    return torch.round(leaf.grad, decimals=4)


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
