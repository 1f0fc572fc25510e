# kind: wrong
# public: pass
# feedback: the stable form without its abs
def logistic_loss(z, t):
    # blind round zzh's student_04: the abs of log1p(exp(-|z|)) dropped, wrong for z < 0
    return (z.clamp(min=0) - z * t + torch.log1p(torch.exp(-z))).mean()


def accumulated_grad(w, X, y, sizes):
    B = sum(sizes)
    w.grad = None
    start = 0
    for bj in sizes:
        Xj, yj = X[start:start + bj], y[start:start + bj]
        (logistic_loss(Xj @ w, yj) * (bj / B)).backward()
        start += bj
    return w.grad.clone()

w_start = torch.zeros(n, requires_grad=True)
micro = accumulated_grad(w_start, X, y, [50, 150])
