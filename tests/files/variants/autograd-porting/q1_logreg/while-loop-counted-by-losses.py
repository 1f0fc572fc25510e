# kind: correct
# public: pass
# feedback: 
def train_logreg(X, y, lr=0.5, steps=300):
    w = X.new_zeros(X.shape[1]).requires_grad_()
    b = X.new_zeros(1).requires_grad_()
    losses = []
    while len(losses) < steps:
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        losses.append(loss.item())
        w.grad = b.grad = None
        loss.backward()
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
