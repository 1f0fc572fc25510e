# kind: wrong
# public: fail
# feedback: That tensor was made under torch.inference_mode()
def accumulated_grad(w, X, y, sizes):
    B = sum(sizes)
    with torch.inference_mode():
        total = torch.zeros_like(w)  # only a buffer: no graph needed
    start = 0
    for size in sizes:
        w.grad = None
        loss = F.binary_cross_entropy_with_logits(X[start:start + size] @ w, y[start:start + size])
        (loss * size / B).backward()
        total += w.grad
        start += size
    return total

w_start = torch.zeros(n, requires_grad=True)
micro = accumulated_grad(w_start, X, y, [50, 150])
