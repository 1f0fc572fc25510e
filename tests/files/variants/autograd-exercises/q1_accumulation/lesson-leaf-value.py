# kind: wrong
# public: pass
# feedback: These are the lesson's gradients for p0=2.0 (typed in, or kept from an earlier call): build the leaf from the p0 argument on every call.
def square_grads(p0, repeats, clear):
    p = torch.tensor(2.0, requires_grad=True)  # copied from the lesson
    grads = []
    for _ in range(repeats):
        if clear:
            p.grad = None
        (p ** 2).backward()
        grads.append(p.grad.item())
    return grads


uncleared = square_grads(2.0, 3, clear=False)
cleared = square_grads(2.0, 3, clear=True)
reuse_raises = True
