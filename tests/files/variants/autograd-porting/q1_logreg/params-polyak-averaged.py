# kind: wrong
# public: pass
# feedback: the uniform (Polyak) average of the grader's w and b after each update
def train_logreg(X, y, lr=0.5, steps=300):
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    w_avg, b_avg = torch.zeros(X.shape[1]), torch.zeros(1)
    losses = []
    for k in range(steps):
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        w.grad = None
        b.grad = None
        loss.backward()
        losses.append(loss.item())
        with torch.no_grad():
            w -= lr * w.grad
            b -= lr * b.grad
            w_avg += (w - w_avg) / (k + 1)  # Polyak averaging: a smoother estimate
            b_avg += (b - b_avg) / (k + 1)
    return w_avg, b_avg, losses

def logreg_grads(X, y, w, b):
    residual = torch.sigmoid(X @ w + b) - y
    return X.T @ residual / X.shape[0], residual.mean().reshape(b.shape)

w, b, losses = train_logreg(X, y)
with torch.no_grad():
    train_accuracy = (((X @ w + b) > 0).float() == y).float().mean().item()
