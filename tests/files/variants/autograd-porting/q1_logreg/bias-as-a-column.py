# kind: correct
# public: pass
# feedback: 
def train_logreg(X, y, lr=0.5, steps=300):
    X1 = torch.cat([X, torch.ones(X.shape[0], 1, dtype=X.dtype)], dim=1)  # the bias as a column
    theta = torch.zeros(X1.shape[1], requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(X1 @ theta, y)
        theta.grad = None
        loss.backward()
        with torch.no_grad():
            theta -= lr * theta.grad
        losses.append(loss.item())
    return theta[:-1].detach(), theta[-1:].detach(), losses

def logreg_grads(X, y, w, b):
    residual = torch.sigmoid(X @ w + b) - y
    return X.T @ residual / X.shape[0], residual.mean().reshape(b.shape)

w, b, losses = train_logreg(X, y)
with torch.no_grad():
    train_accuracy = (((X @ w + b) > 0).float() == y).float().mean().item()
