# kind: wrong
# probe: probe.input-class.non-integer
# feedback: wrong for non-integer inputs
# The leaf is built from round(p0): an integer tensor cannot require grad, so it was
# "fixed" by rounding first and converting afterwards.
def square_grads(p0, repeats, clear):
    p = torch.tensor(round(p0)).double().requires_grad_()
    grads = []
    for _ in range(repeats):
        if clear:
            p.grad = None
        p.square().backward()
        grads.append(p.grad.item())
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
