# kind: correct
# public: pass
# feedback: 
def train_logreg(X, y, lr=0.5, steps=300):
    w = torch.zeros(X.shape[1]).requires_grad_()
    b = torch.zeros(1).requires_grad_()
    losses = []
    step = 0
    while step < steps:
        for p in (w, b):
            if p.grad is not None:
                p.grad.zero_()
        logits = X @ w + b
        loss = F.binary_cross_entropy_with_logits(logits, y, reduction="mean")
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for p in (w, b):
                p.sub_(lr * p.grad)
        step += 1
    return w, b, losses

def logreg_grads(X, y, w, b):
    r = torch.sigmoid(X @ w + b) - y
    return torch.mean(X * r[:, None], dim=0), torch.mean(r, dim=0, keepdim=True)

w, b, losses = train_logreg(X, y)
with torch.no_grad():
    train_accuracy = (((X @ w + b) > 0).float() == y).float().mean().item()
