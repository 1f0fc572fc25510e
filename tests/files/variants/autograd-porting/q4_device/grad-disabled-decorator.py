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
@torch.no_grad()
def predict(model, batch, device):
    model.to(device).eval()
    return model.forward(batch.to(device, non_blocking=True))


def make_optimizer(model, device, lr=0.1):
    params = list(model.to(device).parameters())
    return torch.optim.SGD(params, lr=lr)

device = pick_device()
torch.manual_seed(1)
lesson_model = nn.Linear(2, 2)
device_output = predict(lesson_model, torch.ones(3, 2), device)
