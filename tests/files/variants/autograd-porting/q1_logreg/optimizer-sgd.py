# kind: correct
# public: pass
# feedback: 
def train_logreg(X, y, lr=0.5, steps=300):
    n = X.shape[1]
    w = torch.nn.Parameter(torch.zeros(n))
    b = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([w, b], lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(X @ w + b, y)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return w.detach(), b.detach(), losses

def logreg_grads(X, y, w, b):
    m = X.shape[0]
    p = 1 / (1 + torch.exp(-(X @ w + b)))
    return (p - y) @ X / m, (p - y).sum() / m  # a 0-d bias gradient is accepted

w, b, losses = train_logreg(X, y)
with torch.no_grad():
    train_accuracy = (((X @ w + b) > 0).float() == y).float().mean().item()
