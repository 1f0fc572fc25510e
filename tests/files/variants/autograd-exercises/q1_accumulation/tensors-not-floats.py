# kind: wrong
# public: fail
# feedback: not Python floats: append p.grad.item() after each backward.
def square_grads(p0, repeats, clear):
    p = torch.tensor(float(p0), requires_grad=True)
    grads = []
    for _ in range(repeats):
        if clear:
            p.grad = None
        (p ** 2).backward()
        grads.append(p.grad.clone())
    return grads


uncleared = square_grads(2.0, 3, clear=False)
cleared = square_grads(2.0, 3, clear=True)
reuse_raises = True
