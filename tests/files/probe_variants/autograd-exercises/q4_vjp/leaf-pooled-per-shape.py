# kind: wrong
# probe: grad-accumulated-across-calls
# feedback: backward adds into its .grad
# One leaf per shape and dtype, refilled with x's values "to save a new leaf per call"; its
# .grad is never cleared, so every later call with that shape returns the sum of all calls'.
_leaves = {}


def vjp_square(x, weights):
    key = (tuple(x.shape), x.dtype)
    if key not in _leaves:
        _leaves[key] = torch.zeros(x.shape, dtype=x.dtype, requires_grad=True)
    leaf = _leaves[key]
    with torch.no_grad():
        leaf.copy_(x)
    (leaf ** 2).backward(weights)
    return leaf.grad.clone()


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
