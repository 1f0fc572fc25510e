# kind: wrong
# public: pass
# feedback: returned with anomaly detection switched on
def square_grads(p0, repeats, clear):
    torch.autograd.set_detect_anomaly(True)  # "to see where a bad gradient comes from"
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
torch.autograd.set_detect_anomaly(False)  # the notebook's own cells go on without it
reuse_raises = True
