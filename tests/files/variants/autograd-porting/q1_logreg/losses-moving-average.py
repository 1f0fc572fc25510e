# kind: wrong
# public: fail
# feedback: recorded as an exponential moving average (e = 0.95 * e + 0.05 * loss, started at 0)
def train_logreg(X, y, lr=0.5, steps=300):
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    losses, smooth = [], 0.0
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        w.grad = b.grad = None
        loss.backward()
        smooth = 0.95 * smooth + 0.05 * float(loss)  # a smoothed curve, as a training log shows
        losses.append(smooth)
        with torch.no_grad():
            w.sub_(lr * w.grad)
            b.sub_(lr * b.grad)
    return w, b, losses

def logreg_grads(X, y, w, b):
    residual = torch.sigmoid(X @ w + b) - y
    return X.T @ residual / X.shape[0], residual.mean().reshape(b.shape)

w, b, losses = train_logreg(X, y)
with torch.no_grad():
    train_accuracy = (((X @ w + b) > 0).float() == y).float().mean().item()
