# kind: wrong
# public: pass
# feedback: w has +1 hooks
def accumulated_grad(w, X, y, sizes):
    w.grad = None
    total = sum(sizes)
    w.register_hook(lambda g: g / total)  # the 1/B of every micro-batch at once
    for Xj, yj in zip(torch.split(X, sizes), torch.split(y, sizes)):
        F.binary_cross_entropy_with_logits(Xj @ w, yj, reduction="sum").backward()
    return w.grad.clone()


w_start = torch.zeros(n, requires_grad=True)
micro = accumulated_grad(w_start, X, y, [50, 150])
print(micro)
