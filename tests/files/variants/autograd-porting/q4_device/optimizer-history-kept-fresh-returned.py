# kind: correct
# public: pass
# feedback: 
def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def predict(model, batch, device):
    model = model.to(device)
    batch = batch.to(device)
    model.eval()
    with torch.no_grad():
        return model(batch)


history = []  # every optimizer built, kept for plotting; each call returns its own


def make_optimizer(model, device, lr=0.1):
    history.append(torch.optim.SGD(model.to(device).parameters(), lr=lr))
    return history[-1]

device = pick_device()
torch.manual_seed(1)
lesson_model = nn.Linear(2, 2)
device_output = predict(lesson_model, torch.ones(3, 2), device)
