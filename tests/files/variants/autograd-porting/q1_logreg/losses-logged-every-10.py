# kind: wrong
# public: fail
# feedback: every 10 steps: the steps between are missing
def train_logreg(X, y, lr=0.5, steps=300):
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses = []
    for step in range(steps):
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        w.grad = None
        b.grad = None
        loss.backward()
        if step % 10 == 0:  # log every 10 steps
            losses.append(loss.item())
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
    return w, b, losses


def logreg_grads(X, y, w, b):
    residual = torch.sigmoid(X @ w + b) - y
    return X.T @ residual / X.shape[0], residual.mean().reshape(b.shape)

w, b, losses = train_logreg(X, y)
with torch.no_grad():
    train_accuracy = (((X @ w + b) > 0).float() == y).float().mean().item()

