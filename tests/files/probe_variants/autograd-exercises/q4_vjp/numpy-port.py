# kind: wrong
# probe: probe.input-class.requires-grad
# feedback: wrong for requires-grad inputs
# Ported from a NumPy notebook: the leaf is rebuilt from x.numpy(), which refuses an x that
# requires grad.
def vjp_square(x, weights):
    leaf = torch.from_numpy(x.numpy().copy()).requires_grad_()
    (leaf ** 2).backward(weights)
    return leaf.grad


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
