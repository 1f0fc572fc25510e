# kind: correct
# probe: none
# feedback:
# Unusual but right: a stateless forward with torch.func.functional_call on an eval copy,
# leaving the caller's model in the mode it arrived in.
import copy as _copy
from torch.func import functional_call


def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def predict(model, batch, device):
    model.to(device)
    frozen = _copy.deepcopy(model).eval()
    params = {k: v.detach() for k, v in frozen.named_parameters()}
    with torch.inference_mode():
        return functional_call(frozen, params, (batch.to(device),)).clone()


def make_optimizer(model, device, lr=0.1):
    model.to(device)
    return torch.optim.SGD(model.parameters(), lr=lr)


device = pick_device()
torch.manual_seed(1)
lesson_model = nn.Linear(2, 2)
device_output = predict(lesson_model, torch.ones(3, 2), device)
