# kind: wrong
# public: fail
# feedback: with clear=False the gradient must accumulate, but p.grad was cleared or the leaf was re-created between backward calls.
def square_grads(p0, repeats, clear):
    grads = []
    for _ in range(repeats):
        p = torch.tensor(float(p0), requires_grad=True)  # a new leaf every time
        (p ** 2).backward()
        grads.append(p.grad.item())
    return grads


uncleared = square_grads(2.0, 3, clear=False)
cleared = square_grads(2.0, 3, clear=True)
reuse_raises = True
