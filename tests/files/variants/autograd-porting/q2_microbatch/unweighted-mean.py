# kind: wrong
# public: fail
# feedback: It matches the plain average of the micro-batch mean gradients
def accumulated_grad(w, X, y, sizes):
    w.grad = None
    start = 0
    for size in sizes:
        loss = F.binary_cross_entropy_with_logits(X[start:start + size] @ w, y[start:start + size])
        (loss / len(sizes)).backward()  # averages the micro-batch means
        start += size
    return w.grad.clone()

w_start = torch.zeros(n, requires_grad=True)
micro = accumulated_grad(w_start, X, y, [50, 150])
