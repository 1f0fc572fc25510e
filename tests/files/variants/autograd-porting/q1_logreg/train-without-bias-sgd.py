# kind: wrong
# public: fail
# feedback: training in which b stays at its starting 0, so the logits are X @ w
def train_logreg(X, y, lr=0.5, steps=300):
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([w, b], lr=lr)  # SGD skips b, whose .grad stays None
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(torch.matmul(X, w), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return w.detach(), b.detach(), losses

def logreg_grads(X, y, w, b):
    residual = torch.sigmoid(X @ w + b) - y
    return X.T @ residual / X.shape[0], residual.mean().reshape(b.shape)

w, b, losses = train_logreg(X, y)
with torch.no_grad():
    train_accuracy = (((X @ w + b) > 0).float() == y).float().mean().item()
