# kind: correct
# public: pass
def pick_device():
    name = "cpu"
    if torch.cuda.is_available():
        name = "cuda"
    elif torch.backends.mps.is_available():
        name = "mps"
    return torch.device(name)
def predict(model, batch, device):
    model.to(device).eval()
    was = torch.is_grad_enabled()
    torch.set_grad_enabled(False)
    try:
        return model(batch.to(device))
    finally:
        torch.set_grad_enabled(was)

def make_optimizer(model, device, lr=0.1):
    params = list(model.to(device).parameters())
    return torch.optim.SGD(params, lr=lr)

device = pick_device()
torch.manual_seed(1)
lesson_model = nn.Linear(2, 2)
device_output = predict(lesson_model, torch.ones(3, 2), device)
