# kind: wrong
# public: pass
# feedback: `model.eval` alone names the method and changes nothing
def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def predict(model, batch, device):
    model = model.to(device)
    batch = batch.to(device)
    model.eval  # blind round zzzl: the parentheses forgotten
    with torch.no_grad():
        return model(batch)


def make_optimizer(model, device, lr=0.1):
    model.to(device)
    return torch.optim.SGD(model.parameters(), lr=lr)

device = pick_device()
torch.manual_seed(1)
lesson_model = nn.Linear(2, 2)
device_output = predict(lesson_model, torch.ones(3, 2), device)
