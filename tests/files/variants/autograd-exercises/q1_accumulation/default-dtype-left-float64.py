# kind: wrong
# public: pass
# feedback: returned with torch's default dtype set to float64
def square_grads(p0, repeats, clear):
    torch.set_default_dtype(torch.float64)  # "more precise gradients", never put back
    p = torch.tensor(p0, requires_grad=True)
    grads = []
    for _ in range(repeats):
        if clear:
            p.grad = None
        (p ** 2).backward()
        grads.append(p.grad.item())
    return grads


uncleared = square_grads(2.0, 3, clear=False)
cleared = square_grads(2.0, 3, clear=True)
torch.set_default_dtype(torch.float32)  # the notebook's own cells go on in float32
reuse_raises = True
