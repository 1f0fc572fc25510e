# kind: wrong
# public: fail
# feedback: applies the sigmoid twice
def accumulated_grad(w, X, y, sizes):
    w.grad = None
    B, start = sum(sizes), 0
    for bj in sizes:
        p = torch.sigmoid(X[start:start + bj] @ w)
        loss = F.binary_cross_entropy_with_logits(p, y[start:start + bj])  # p is not a logit
        (loss * bj / B).backward()
        start += bj
    return w.grad.clone()

w_start = torch.zeros(n, requires_grad=True)
micro = accumulated_grad(w_start, X, y, [50, 150])
