# kind: wrong
# public: pass
# feedback: It matches the b_j / B weight applied inside the loss call, to the logits
def accumulated_grad(w, X, y, sizes):
    w.grad = None
    B = sum(sizes)
    for Xj, yj in zip(torch.split(X, sizes), torch.split(y, sizes)):
        weight = len(yj) / B
        F.binary_cross_entropy_with_logits((weight * Xj) @ w, yj).backward()  # weights the rows
    return w.grad.clone()

w_start = torch.zeros(n, requires_grad=True)
micro = accumulated_grad(w_start, X, y, [50, 150])
