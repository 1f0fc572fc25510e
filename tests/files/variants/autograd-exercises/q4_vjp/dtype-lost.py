# kind: wrong
# public: pass
# feedback: the fresh leaf lost x's dtype. A tensor built from a Python list
def vjp_square(x, weights):
    leaf = torch.tensor(x.tolist(), requires_grad=True)  # a Python list becomes float32
    v = leaf ** 2
    v.backward(weights.to(leaf.dtype))
    return leaf.grad


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
