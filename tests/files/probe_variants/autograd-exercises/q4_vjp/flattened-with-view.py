# kind: wrong
# probe: probe.input-class.non-contiguous
# feedback: raised for x=
# Flattens with .view(-1) "to work on a vector", which a transposed x refuses (its memory is
# not laid out row after row); .reshape would copy.
def vjp_square(x, weights):
    flat = x.detach().view(-1).clone().requires_grad_()
    (flat ** 2).backward(weights.reshape(-1))
    return flat.grad.view(x.shape)


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
