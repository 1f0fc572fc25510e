# kind: wrong
# public: fail
# feedback: each micro-batch must start where the previous one ended
def accumulated_grad(w, X, y, sizes):
    w.grad = None
    B = sum(sizes)
    for j, size in enumerate(sizes):
        Xj, yj = X[j * size:(j + 1) * size], y[j * size:(j + 1) * size]
        loss = F.binary_cross_entropy_with_logits(Xj @ w, yj)
        (loss * size / B).backward()
    return w.grad.clone()

w_start = torch.zeros(n, requires_grad=True)
micro = accumulated_grad(w_start, X, y, [50, 150])
