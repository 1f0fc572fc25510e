# kind: correct
# public: pass
# feedback: 
def accumulated_grad(w, X, y, sizes):
    opt = torch.optim.SGD([w], lr=0.0)
    opt.zero_grad(set_to_none=True)
    total = float(sum(sizes))
    chunks = list(zip(torch.split(X, sizes), torch.split(y, sizes)))
    for Xj, yj in chunks:
        # the fused loss: a sigmoid then log saturates for large logits (sigmoid-log)
        mean_loss = F.binary_cross_entropy_with_logits(Xj @ w, yj)
        (mean_loss * Xj.shape[0] / total).backward()
    return w.grad.detach().clone()

w_start = torch.zeros(n, requires_grad=True)
micro = accumulated_grad(w_start, X, y, [50, 150])
