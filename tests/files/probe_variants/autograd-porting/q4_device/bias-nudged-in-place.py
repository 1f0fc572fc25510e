# kind: wrong
# probe: probe.state-on-objects
# feedback: the first call changed the objects it was given
# A "calibration" that shifts the last layer's bias in place on every call.
def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def predict(model, batch, device):
    model.to(device).eval()
    with torch.no_grad():
        last = [m for m in model.modules() if isinstance(m, nn.Linear)][-1]
        last.bias.add_(0.01)
        return model(batch.to(device))


def make_optimizer(model, device, lr=0.1):
    model.to(device)
    return torch.optim.SGD(model.parameters(), lr=lr)


device = pick_device()
torch.manual_seed(1)
lesson_model = nn.Linear(2, 2)
device_output = predict(lesson_model, torch.ones(3, 2), device)
