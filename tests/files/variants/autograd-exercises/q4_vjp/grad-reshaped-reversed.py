# kind: wrong
# public: pass
# feedback: the right values read row by row into x's sizes reversed
def vjp_square(x, weights):
    leaf = x.detach().clone().requires_grad_(True)
    v = leaf ** 2
    v.backward(weights)
    return leaf.grad.reshape(x.shape[::-1])  # "v^T J comes out as a row": sizes reversed


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
