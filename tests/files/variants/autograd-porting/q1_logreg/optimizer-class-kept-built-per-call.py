# kind: correct
# public: pass
# feedback: 
import functools

OPTIMIZER = functools.partial(torch.optim.SGD, momentum=0.0)  # the class is kept, not an instance
built = []  # every optimizer made, for inspection


def train_logreg(X, y, lr=0.5, steps=300):
    w = torch.zeros(X.shape[1], requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    opt = OPTIMIZER([w, b], lr=lr)
    built.append(opt)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
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
