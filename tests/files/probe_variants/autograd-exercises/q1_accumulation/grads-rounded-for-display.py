# kind: wrong
# probe: probe.rounded
# feedback: something rounds the result
# A tidy-looking answer: each gradient rounded to three decimals before it is stored.
def square_grads(p0, repeats, clear):
    leaf = torch.tensor(float(p0), requires_grad=True)
    history = []
    for _ in range(repeats):
        if clear:
            leaf.grad = None
        (leaf * leaf).backward()
        history.append(round(leaf.grad.item(), 3))
    return history


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
