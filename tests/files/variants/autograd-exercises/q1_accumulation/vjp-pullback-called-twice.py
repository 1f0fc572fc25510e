# kind: wrong
# public: fail
# feedback: each step's gradient was added twice.
def square_grads(p0, repeats, clear):
    p = torch.tensor(float(p0), requires_grad=True)
    total = torch.zeros(())
    grads = []
    for _ in range(repeats):
        if clear:
            total = torch.zeros(())
        _, pullback = torch.func.vjp(lambda t: t ** 2, p.detach())
        (g,) = pullback(torch.ones(()))
        total += g
        total += pullback(torch.ones(()))[0]  # the gradient of this step, added in
        grads.append(total.item())
    return grads


uncleared = square_grads(2.0, 3, clear=False)
cleared = square_grads(2.0, 3, clear=True)
reuse_raises = True
