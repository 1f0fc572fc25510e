# kind: correct
# public: pass
# feedback: 
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
    X1 = torch.cat([X, torch.ones(X.shape[0], 1, dtype=X.dtype)], dim=1)  # b folded into X
    theta = torch.cat([w, b.reshape(1)])
    grad = X1.T @ (torch.sigmoid(X1 @ theta) - y) / X.shape[0]
    return grad[:-1], grad[-1:]

w, b, losses = train_logreg(X, y)
with torch.no_grad():
    train_accuracy = (((X @ w + b) > 0).float() == y).float().mean().item()
