# kind: wrong
# public: pass
# feedback: not b_j / B with B =
def accumulated_grad(w, X, y, sizes):
    w.grad = None
    start = 0
    for b_j in sizes:
        logits = X[start:start + b_j] @ w
        loss = F.binary_cross_entropy_with_logits(logits, y[start:start + b_j])
        (loss * (b_j / m)).backward()  # m: the notebook's data set size (200 in the lesson)
        start += b_j
    return w.grad.detach().clone()


w_start = torch.zeros(n, requires_grad=True)
micro = accumulated_grad(w_start, X, y, [50, 150])
print(micro)
