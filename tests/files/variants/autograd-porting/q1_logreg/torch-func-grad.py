# kind: correct
# public: pass
# feedback: 
def train_logreg(X, y, lr=0.5, steps=300):
    from torch.func import grad_and_value

    def loss_of(params):
        w, b = params
        return F.binary_cross_entropy_with_logits(X @ w + b, y)

    params = (torch.zeros(X.shape[1]), torch.zeros(1))
    losses = []
    step = grad_and_value(loss_of)
    for _ in range(steps):
        grads, loss = step(params)
        params = tuple(p - lr * g for p, g in zip(params, grads))
        losses.append(float(loss))
    w, b = (p.requires_grad_() for p in params)
    return w, b, losses


def logreg_grads(X, y, w, b):
    with torch.no_grad():
        residual = torch.sigmoid(torch.addmv(b.expand(X.shape[0]), X, w)) - y
        return torch.mv(X.T, residual) / X.shape[0], residual.mean(0, keepdim=True)

w, b, losses = train_logreg(X, y)
with torch.no_grad():
    train_accuracy = (((X @ w + b) > 0).float() == y).float().mean().item()

