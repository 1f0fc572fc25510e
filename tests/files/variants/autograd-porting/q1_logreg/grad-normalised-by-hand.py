# kind: wrong
# public: pass
# feedback: rescaled to norm at most 1 before each update
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
            # keep the step bounded: a gradient longer than 1 is cut back to length 1
            norm = torch.cat([w.grad, b.grad]).norm()
            scale = 1.0 / max(1.0, norm.item())
            w -= lr * scale * w.grad
            b -= lr * scale * b.grad
        losses.append(loss.item())
    return w, b, losses


def logreg_grads(X, y, w, b):
    residual = torch.sigmoid(X @ w + b) - y
    return X.T @ residual / X.shape[0], residual.mean().reshape(b.shape)

w, b, losses = train_logreg(X, y)
with torch.no_grad():
    train_accuracy = (((X @ w + b) > 0).float() == y).float().mean().item()
