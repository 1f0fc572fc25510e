# kind: wrong
# public: pass
# feedback: after the call the model's parameters are on
def pick_device():
    name = "cpu"
    if torch.cuda.is_available():
        name = "cuda"
    elif torch.backends.mps.is_available():
        name = "mps"
    return torch.device(name)
def predict(model, batch, device):
    model = model.to(device)
    model.eval()
    with torch.no_grad():
        return model(batch.to(device))


def make_optimizer(model, device, lr=0.1):
    # predict moves the model anyway
    return torch.optim.SGD(model.parameters(), lr=lr)

device = pick_device()
torch.manual_seed(1)
lesson_model = nn.Linear(2, 2)
device_output = predict(lesson_model, torch.ones(3, 2), device)
