# kind: correct
# public: pass
# feedback:
def vjp_square(x, weights):
    if x.dim() != 2:
        leaf = x.detach().clone().requires_grad_(True)
        (leaf ** 2).backward(weights)
        return leaf.grad
    leaf = x.detach().t().clone().requires_grad_(True)  # worked on x.t(), transposed back
    (leaf ** 2).backward(weights.t())
    return leaf.grad.t()


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
