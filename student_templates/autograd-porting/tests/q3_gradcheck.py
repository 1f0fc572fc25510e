from otter.test_files import test_case

OK_FORMAT = False

name = "q3_gradcheck"
points = 6

@test_case(points=0.75, hidden=False)
def test_lesson_forward(my_op):
    import torch
    x = torch.tensor([-1.5, -0.5, 0.7, 2.0], dtype=torch.float64)
    got = my_op(x)
    expected = (x ** 3).sum() / (1 + x.abs().sum())
    assert isinstance(got, torch.Tensor) and got.dim() == 0, f'my_op must return a 0-d tensor, got {got!r}'
    assert torch.allclose(got, expected), f'my_op(x) is {got.item()}; the formula gives {expected.item()}'

@test_case(points=0.75, hidden=False)
def test_lesson_gradcheck(check_my_op):
    import torch
    x = torch.tensor([-1.5, -0.5, 0.7, 2.0], dtype=torch.float64)
    result = check_my_op(x)
    assert result is True, f"check_my_op on the lesson's input returned {result!r}; the lesson's gradcheck prints True"

