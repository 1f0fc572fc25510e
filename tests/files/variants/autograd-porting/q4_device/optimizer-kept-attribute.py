# kind: wrong
# public: pass
# feedback: make_optimizer hands back one optimizer built in an earlier call and kept
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



def make_optimizer(model, device, lr=0.1):
    model.to(device)
    opt = getattr(make_optimizer, "opt", None)
    if opt is None:
        opt = make_optimizer.opt = torch.optim.SGD(model.parameters(), lr=lr)
    return opt

device = pick_device()
torch.manual_seed(1)
lesson_model = nn.Linear(2, 2)
device_output = predict(lesson_model, torch.ones(3, 2), device)
