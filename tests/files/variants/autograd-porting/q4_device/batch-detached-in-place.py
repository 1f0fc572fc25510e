# kind: wrong
# public: pass
# feedback: Tensor.to returns the very same tensor, not a copy, so the caller's batch is changed.
def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def predict(model, batch, device):
    model = model.to(device)
    batch = batch.to(device).detach_()  # no graph back to the caller's batch
    model.eval()
    with torch.no_grad():
        return model(batch)


def make_optimizer(model, device, lr=0.1):
    model.to(device)
    return torch.optim.SGD(model.parameters(), lr=lr)

device = pick_device()
torch.manual_seed(1)
lesson_model = nn.Linear(2, 2)
device_output = predict(lesson_model, torch.ones(3, 2), device)
