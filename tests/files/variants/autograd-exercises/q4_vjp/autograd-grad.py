# kind: correct
# public: pass
# feedback:
def vjp_square(x, weights):
    leaf = x.clone().detach().requires_grad_()
    (grad,) = torch.autograd.grad(leaf.pow(2), leaf, grad_outputs=weights)
    return grad


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
