# kind: correct
# public: pass
# feedback: 
def accumulated_grad(w, X, y, sizes):
    if w.grad is not None:
        w.grad.zero_()
    B = sum(sizes)
    offsets = [sum(sizes[:j]) for j in range(len(sizes))]
    for start, size in zip(offsets, sizes):
        Xj, yj = X[start:start + size], y[start:start + size]
        # sum over the micro-batch divided by B equals its mean times size / B
        loss = F.binary_cross_entropy_with_logits(Xj @ w, yj, reduction="sum") / B
        loss.backward()
    return w.grad

w_start = torch.zeros(n, requires_grad=True)
micro = accumulated_grad(w_start, X, y, [50, 150])
