# kind: correct
# public: pass
# feedback: 
def pick_device():
    for name, available in (("cuda", torch.cuda.is_available), ("mps", torch.backends.mps.is_available)):
        if available():
            return torch.device(name)
    return torch.device("cpu")


@torch.no_grad()
def predict(model, batch, device):
    was_training = model.training
    model.to(device)
    model.eval()
    inputs = batch.to(device=device, dtype=next(model.parameters()).dtype)
    output = model(inputs)
    model.train(was_training)
    return output


def make_optimizer(model, device, lr=0.1):
    moved = model.to(device)
    return torch.optim.SGD(params=moved.parameters(), lr=lr, momentum=0.0)

device = pick_device()
torch.manual_seed(1)
lesson_model = nn.Linear(2, 2)
device_output = predict(lesson_model, torch.ones(3, 2), device)
