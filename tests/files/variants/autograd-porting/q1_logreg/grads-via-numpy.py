# kind: wrong
# public: pass
# feedback: Does something fail or change for tensors that require grad
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
    # ported from the NumPy series as it was
    Xn, yn, wn, bn = X.numpy(), y.numpy(), w.numpy(), b.numpy()
    p = 1 / (1 + np.exp(-(Xn @ wn + bn)))
    return torch.from_numpy(Xn.T @ (p - yn) / len(yn)), torch.from_numpy(np.array([(p - yn).mean()], dtype=np.float32))

w, b, losses = train_logreg(X, y)
with torch.no_grad():
    train_accuracy = (((X @ w + b) > 0).float() == y).float().mean().item()

