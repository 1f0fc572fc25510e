# kind: wrong
# public: fail
# feedback: p.grad was not cleared before each backward.
def square_grads(p0, repeats, clear):
    p = torch.tensor(float(p0), requires_grad=True)
    grads = []
    for _ in range(repeats):
        (p ** 2).backward()  # forgot: when clear, reset p.grad first
        grads.append(p.grad.item())
    return grads


uncleared = square_grads(2.0, 3, clear=False)
cleared = square_grads(2.0, 3, clear=True)
reuse_raises = True
