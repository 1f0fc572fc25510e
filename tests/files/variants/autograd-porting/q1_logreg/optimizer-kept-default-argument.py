# kind: wrong
# public: pass
# feedback: one optimizer kept from an earlier call
def train_logreg(X, y, lr=0.5, steps=300, _state={}):
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    opt = _state.setdefault("opt", torch.optim.SGD([w, b], lr=lr))
    losses = []
    for _ in range(steps):
        w.grad, b.grad = None, None
        loss = F.binary_cross_entropy_with_logits(X @ w + b, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return w, b, losses

def logreg_grads(X, y, w, b):
    residual = torch.sigmoid(X @ w + b) - y
    return X.T @ residual / X.shape[0], residual.mean().reshape(b.shape)

w, b, losses = train_logreg(X, y)
with torch.no_grad():
    train_accuracy = (((X @ w + b) > 0).float() == y).float().mean().item()
