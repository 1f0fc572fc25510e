# kind: wrong
# public: pass
# feedback: changed what it was given
def train_logreg(X, y, lr=0.5, steps=300):
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        w.grad = None
        b.grad = None
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        losses.append(loss.item())
    return w, b, losses


def logreg_grads(X, y, w, b):
    # "closed form", checked against autograd on the caller's own leaves
    residual = torch.sigmoid(X @ w.detach() + b.detach()) - y
    grad_w, grad_b = X.T @ residual / X.shape[0], residual.mean().reshape(b.shape)
    if w.requires_grad:
        w.grad, b.grad = None, None
        F.binary_cross_entropy_with_logits(X @ w + b, y).backward()
        assert torch.allclose(w.grad, grad_w, atol=1e-5)
    return grad_w, grad_b

w, b, losses = train_logreg(X, y)
with torch.no_grad():
    train_accuracy = (((X @ w + b) > 0).float() == y).float().mean().item()

