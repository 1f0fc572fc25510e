from otter.test_files import test_case

OK_FORMAT = False

name = "q4_device"
points = 6

@test_case(points=0.5, hidden=False)
def test_pick_device_here(pick_device):
    import torch
    got = pick_device()
    expected = 'cuda' if torch.cuda.is_available() else 'mps' if torch.backends.mps.is_available() else 'cpu'
    assert isinstance(got, torch.device), f'pick_device must return a torch.device, not {got!r}'
    assert got.type == expected, f'pick_device() returned {got}; on this machine expected {expected}'

@test_case(points=1, hidden=False)
def test_lesson_prediction(device_output, device, make_optimizer):
    import torch
    assert isinstance(device_output, torch.Tensor), 'predict must return a tensor'
    assert tuple(device_output.shape) == (3, 2), f'output shape is {tuple(device_output.shape)}; the lesson prints (3, 2)'
    assert device_output.device.type == device.type, f'the output is on {device_output.device}, expected {device}'
    assert not device_output.requires_grad, 'predict must run under torch.no_grad()'
    opt = make_optimizer(torch.nn.Linear(2, 2), device)
    assert isinstance(opt, torch.optim.SGD), f'make_optimizer must return torch.optim.SGD, not {opt!r}'
    assert opt.param_groups[0]['lr'] == 0.1, 'the default learning rate is 0.1'

