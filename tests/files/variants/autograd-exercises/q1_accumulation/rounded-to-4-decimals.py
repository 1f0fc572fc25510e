# kind: wrong
# public: pass
# feedback: rounded to 4 decimal
def square_grads(p0, repeats, clear):
    p = torch.tensor(float(p0), requires_grad=True)
    grads = []
    for _ in range(repeats):
        if clear:
            p.grad = None
        (p ** 2).backward()
        grads.append(round(p.grad.item(), 4))  # tidy floats for printing
    return grads


uncleared = square_grads(2.0, 3, clear=False)
cleared = square_grads(2.0, 3, clear=True)

q = torch.tensor(2.0, requires_grad=True) ** 2
q.backward()
try:
    q.backward()
except RuntimeError:
    reuse_raises = True
else:
    reuse_raises = False
