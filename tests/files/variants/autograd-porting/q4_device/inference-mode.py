# kind: correct
# public: pass
# feedback: 
def pick_device():
    name = "cpu"
    if torch.cuda.is_available():
        name = "cuda"
    elif torch.backends.mps.is_available():
        name = "mps"
    return torch.device(name)


def predict(model, batch, device):
    model.to(device).eval()
    with torch.inference_mode():
        out = model(batch.to(device))
    return out


def make_optimizer(model, device, lr=0.1):
    model = model.to(device)
    return torch.optim.SGD([p for p in model.parameters()], lr)

device = pick_device()
torch.manual_seed(1)
lesson_model = nn.Linear(2, 2)
device_output = predict(lesson_model, torch.ones(3, 2), device)
