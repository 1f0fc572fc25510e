# kind: correct
# public: pass
# feedback:
def square_grads(p0, repeats, clear):
    p = torch.tensor(p0, dtype=torch.float32).requires_grad_()
    out = []
    for _ in range(repeats):
        if clear and p.grad is not None:
            p.grad.zero_()
        loss = p.pow(2)
        loss.backward()
        out.append(float(p.grad))
    return out


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
