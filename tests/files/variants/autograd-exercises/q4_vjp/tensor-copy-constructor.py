# kind: correct
# public: pass
# feedback:
def vjp_square(x, weights):
    leaf = torch.tensor(x.detach().numpy(), dtype=x.dtype, requires_grad=True)
    v = leaf * leaf
    v.backward(gradient=weights)
    return leaf.grad.clone()


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
