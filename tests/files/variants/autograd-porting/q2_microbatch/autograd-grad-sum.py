# kind: correct
# public: pass
# feedback: 
def accumulated_grad(w, X, y, sizes):
    total, start, grad = sum(sizes), 0, torch.zeros_like(w)
    for size in sizes:
        part = F.binary_cross_entropy_with_logits(X[start:start + size] @ w,
                                                  y[start:start + size])
        (g,) = torch.autograd.grad(part * (size / total), w)
        grad += g
        start += size
    w.grad = grad.clone()  # the accumulated gradient, where an optimizer would look for it
    return grad


w_start = torch.zeros(n, requires_grad=True)
micro = accumulated_grad(w_start, X, y, [50, 150])
print(micro)
