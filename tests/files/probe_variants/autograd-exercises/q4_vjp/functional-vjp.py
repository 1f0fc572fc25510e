# kind: correct
# probe: none
# feedback:
# Unusual but right: torch.autograd.functional.vjp on a contiguous copy.
from torch.autograd.functional import vjp


def vjp_square(x, weights):
    _, grad = vjp(lambda t: t * t, x.detach().contiguous(), weights)
    return grad.view(x.shape)


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
