# kind: wrong
# probe: eval-missing
# feedback: Call model.eval() before the forward, not after it.
# eval() is there, but after the forward: the model is in eval mode when predict returns.
def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def predict(model, batch, device):
    model = model.to(device)
    with torch.no_grad():
        out = model(batch.to(device))
    model.eval()
    return out


def make_optimizer(model, device, lr=0.1):
    model.to(device)
    return torch.optim.SGD(model.parameters(), lr=lr)


device = pick_device()
torch.manual_seed(1)
lesson_model = nn.Linear(2, 2)
device_output = predict(lesson_model, torch.ones(3, 2), device)
