# kind: wrong
# public: fail
# feedback: It matches the sum of the micro-batch mean gradients
def accumulated_grad(w, X, y, sizes):
    w.grad = None
    for Xj, yj in zip(X.split(sizes), y.split(sizes)):
        F.binary_cross_entropy_with_logits(Xj @ w, yj).backward()
    return w.grad.clone()

w_start = torch.zeros(n, requires_grad=True)
micro = accumulated_grad(w_start, X, y, [50, 150])
