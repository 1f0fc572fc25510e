# kind: wrong
# public: pass
# feedback: x and the gradient are rounded to float16 on the way and cast back
def vjp_square(x, weights):
    leaf = x.detach().half().requires_grad_()  # "mixed precision": the leaf kept in float16
    v = leaf.to(weights.dtype) ** 2  # the square computed in full precision
    v.backward(weights)
    return leaf.grad.to(x.dtype)


print(vjp_square(torch.tensor([2.0, 3.0]), torch.tensor([1.0, 2.0])))
