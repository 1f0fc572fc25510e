# kind: wrong
# public: pass
# feedback: clear w.grad (w.grad = None) at the start of the accumulation window.
def accumulated_grad(w, X, y, sizes):
    B = sum(sizes)
    start = 0
    for size in sizes:
        loss = F.binary_cross_entropy_with_logits(X[start:start + size] @ w, y[start:start + size])
        (loss * size / B).backward()
        start += size
    return w.grad.clone()

w_start = torch.zeros(n, requires_grad=True)
micro = accumulated_grad(w_start, X, y, [50, 150])
