# kind: wrong
# public: pass
# feedback: That is softmax(output, dim=-1), with output = model(batch)
def pick_device():
    """The best available device: cuda, then mps, then cpu."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def predict(model, batch, device):
    """model(batch) on device, in eval mode, with no graph recorded."""
    model.to(device)
    model.eval()
    batch = batch.to(device)
    with torch.no_grad():
        output = model(batch)
    # a prediction is a probability for each class
    return torch.softmax(output, dim=-1)


def make_optimizer(model, device, lr=0.1):
    """SGD over the model's parameters, after the model has moved to device."""
    model.to(device)
    return torch.optim.SGD(model.parameters(), lr=lr)


device = pick_device()
torch.manual_seed(1)
lesson_model = nn.Linear(2, 2)
device_output = predict(lesson_model, torch.ones(3, 2), device)
