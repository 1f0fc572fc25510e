# kind: wrong
# public: pass
# feedback: returned a tensor that changed when vjp_square was called again
_leaves = {}  # one leaf per (shape, dtype), made once and reused


def vjp_square(x, weights):
    key = (tuple(x.shape), x.dtype)
    if key not in _leaves:
        _leaves[key] = torch.zeros(x.shape, dtype=x.dtype, requires_grad=True)
    leaf = _leaves[key]
    with torch.no_grad():
        leaf.copy_(x)
    if leaf.grad is not None:
        leaf.grad.zero_()
    v = leaf ** 2
    v.backward(weights)
    return leaf.grad


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
