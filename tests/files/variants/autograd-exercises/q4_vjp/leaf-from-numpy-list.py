# kind: wrong
# public: pass
# feedback: A tensor built from a Python list, as torch.tensor(x.tolist()) or torch.tensor(x.numpy().tolist()) builds it, is float32, torch's default dtype
def vjp_square(x, weights):
    values = x.detach().numpy().tolist()  # plain numbers, so nothing is shared with x
    leaf = torch.tensor(values, requires_grad=True)
    v = leaf * leaf
    v.backward(weights.to(leaf.dtype))
    return leaf.grad


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
