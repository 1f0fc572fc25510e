# kind: wrong
# public: pass
# feedback: sizes became []
def accumulated_grad(w, X, y, sizes):
    w.grad = None
    total, start = sum(sizes), 0
    while sizes:  # take the micro-batches off the list one by one
        size = sizes.pop(0)
        Xj, yj = X[start:start + size], y[start:start + size]
        (F.binary_cross_entropy_with_logits(Xj @ w, yj) * size / total).backward()
        start += size
    return w.grad.clone()


w_start = torch.zeros(n, requires_grad=True)
micro = accumulated_grad(w_start, X, y, [50, 150])
print(micro)
