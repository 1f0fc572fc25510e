# kind: wrong
# public: pass
# feedback: the logits were computed as X @ w, leaving b out
def train_logreg(X, y, lr=0.5, steps=300):
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        w.grad, b.grad = None, None
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        losses.append(loss.item())
    return w, b, losses

def logreg_grads(X, y, w, b):
    m = X.shape[0]
    p = 1 / (1 + torch.exp(-(X * w).sum(dim=1)))
    grad_w = torch.einsum("ij,i->j", X, p - y) / m
    grad_b = torch.tensor([(p - y).sum().item() / m])
    return grad_w, grad_b

w, b, losses = train_logreg(X, y)
with torch.no_grad():
    train_accuracy = (((X @ w + b) > 0).float() == y).float().mean().item()
