from otter.test_files import test_case

OK_FORMAT = False

name = "q2_saved"
points = 4

@test_case(points=1, hidden=False)
def test_lesson_network(count_saved, tracked, untracked):
    import torch
    for label, got in (('tracked', tracked), ('untracked', untracked)):
        assert isinstance(got, (tuple, list)) and len(got) == 2, f'{label} must be a tuple (pack calls, bytes); got {got!r}'
        assert all((type(v) is int for v in got)), f'{label} must hold two Python ints; got {got!r}'
    assert tuple(untracked) == (0, 0), f'untracked is {tuple(untracked)}: a forward under torch.no_grad() saves nothing'
    assert tuple(tracked) == (4, 272), f"tracked is {tuple(tracked)}; with torch 2.13 on CPU the lesson's network on torch.ones(3, 4) saves 4 tensors, 272 bytes"
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    again = count_saved(net, torch.ones(3, 4), True)
    assert tuple(again) == tuple(tracked), f'a second tracked call gave {tuple(again)}, not {tuple(tracked)}: start counting from zero inside count_saved on every call'

