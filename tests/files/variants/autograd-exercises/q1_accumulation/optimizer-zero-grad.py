# kind: correct
# public: pass
# feedback:
def square_grads(p0, repeats, clear):
    p = torch.nn.Parameter(torch.tensor(float(p0)))
    opt = torch.optim.SGD([p], lr=0.0)
    def step():
        if clear:
            opt.zero_grad(set_to_none=True)
        (p * p).backward()
        return p.grad.item()
    return [step() for _ in range(repeats)]


uncleared = square_grads(2.0, 3, clear=False)
cleared = square_grads(2.0, 3, clear=True)
reuse_raises = True
