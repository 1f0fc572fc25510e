# kind: wrong
# public: fail
# feedback: the per-example losses are summed instead of averaged (reduction='sum', or each micro-batch's mean loss scaled by b_j without the / B
def accumulated_grad(w, X, y, sizes):
    w.grad = None
    start = 0
    for size in sizes:
        Xj, yj = X[start:start + size], y[start:start + size]
        F.binary_cross_entropy_with_logits(Xj @ w, yj, reduction="sum").backward()
        start += size
    return w.grad.clone()

w_start = torch.zeros(n, requires_grad=True)
micro = accumulated_grad(w_start, X, y, [50, 150])
