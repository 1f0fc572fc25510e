# kind: wrong
# public: pass
# feedback: The losses match the grader's run on this data with an epsilon inside the log
def train_logreg(X, y, lr=0.5, steps=300):
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    eps = 1e-8  # keeps log away from log(0)
    for _ in range(steps):
        p = torch.sigmoid(X @ w + b)
        loss = -(y * torch.log(p + eps) + (1 - y) * torch.log(1 - p + eps)).mean()
        w.grad = None
        b.grad = None
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
        losses.append(loss.item())
    return w, b, losses


def logreg_grads(X, y, w, b):
    residual = torch.sigmoid(X @ w + b) - y
    return X.T @ residual / X.shape[0], residual.mean().reshape(b.shape)

w, b, losses = train_logreg(X, y)
with torch.no_grad():
    train_accuracy = (((X @ w + b) > 0).float() == y).float().mean().item()
