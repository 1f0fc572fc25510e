# kind: correct
# public: pass
# feedback:
def vjp_square(x, weights):
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        leaf = x.detach().clone().requires_grad_()
        (leaf ** 2).backward(weights)
        return leaf.grad
    finally:
        torch.use_deterministic_algorithms(before)


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
