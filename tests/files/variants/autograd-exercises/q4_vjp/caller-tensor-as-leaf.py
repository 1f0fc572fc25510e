# kind: wrong
# public: pass
# feedback: vjp_square changed the caller's tensor x
def vjp_square(x, weights):
    x.requires_grad_(True)  # turns the caller's own tensor into the leaf
    v = x ** 2
    v.backward(weights)
    return x.grad


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
