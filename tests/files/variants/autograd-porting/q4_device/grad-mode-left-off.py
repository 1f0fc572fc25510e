# kind: wrong
# public: pass
# feedback: returned with autograd switched off
def pick_device():
    name = "cpu"
    if torch.cuda.is_available():
        name = "cuda"
    elif torch.backends.mps.is_available():
        name = "mps"
    return torch.device(name)
def predict(model, batch, device):
    model.to(device).eval()
    torch.set_grad_enabled(False)  # "no graph while predicting"
    return model(batch.to(device))

def make_optimizer(model, device, lr=0.1):
    params = list(model.to(device).parameters())
    return torch.optim.SGD(params, lr=lr)

device = pick_device()
torch.manual_seed(1)
lesson_model = nn.Linear(2, 2)
device_output = predict(lesson_model, torch.ones(3, 2), device)
