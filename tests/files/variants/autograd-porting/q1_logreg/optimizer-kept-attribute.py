# kind: wrong
# public: pass
# feedback: one optimizer kept from an earlier call
class Trainer:
    """Holds the parameters and their optimizer between calls."""

    def fit(self, X, y, lr, steps):
        self.w = torch.zeros(X.shape[1], requires_grad=True)
        self.b = torch.zeros(1, requires_grad=True)
        if not hasattr(self, "opt"):
            self.opt = torch.optim.SGD([self.w, self.b], lr=lr)
        losses = []
        for _ in range(steps):
            self.opt.zero_grad(set_to_none=False)
            loss = F.binary_cross_entropy_with_logits(X @ self.w + self.b, y)
            loss.backward()
            self.opt.step()
            losses.append(loss.item())
        return self.w, self.b, losses


TRAINER = Trainer()


def train_logreg(X, y, lr=0.5, steps=300):
    return TRAINER.fit(X, y, lr, steps)

def logreg_grads(X, y, w, b):
    residual = torch.sigmoid(X @ w + b) - y
    return X.T @ residual / X.shape[0], residual.mean().reshape(b.shape)

w, b, losses = train_logreg(X, y)
with torch.no_grad():
    train_accuracy = (((X @ w + b) > 0).float() == y).float().mean().item()
