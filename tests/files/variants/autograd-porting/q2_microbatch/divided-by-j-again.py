# kind: wrong
# public: fail
# feedback: it was divided by J once more (the result, or each micro-batch's loss or weight), though the b_j / B weights already make the sum the full-batch mean
def accumulated_grad(w, X, y, sizes):
    w.grad = None
    B, J = sum(sizes), len(sizes)
    for Xj, yj in zip(torch.split(X, sizes), torch.split(y, sizes)):
        loss = F.binary_cross_entropy_with_logits(Xj @ w, yj)
        (loss * len(yj) / B).backward()
    return w.grad / J  # averaged over the micro-batches as well

w_start = torch.zeros(n, requires_grad=True)
micro = accumulated_grad(w_start, X, y, [50, 150])
