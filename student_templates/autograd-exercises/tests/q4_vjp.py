from otter.test_files import test_case

OK_FORMAT = False

name = "q4_vjp"
points = 4

@test_case(points=1, hidden=False)
def test_lesson_vjp(vjp_square):
    import torch
    x = torch.tensor([2.0, 3.0])
    got = vjp_square(x, torch.tensor([1.0, 2.0]))
    assert isinstance(got, torch.Tensor), f'vjp_square must return a tensor; got {got!r}'
    assert got.shape == (2,) and got.dtype == torch.float32, f'expected shape (2,) float32 like x; got shape {tuple(got.shape)} {got.dtype}'
    assert got.tolist() == [4.0, 12.0], f'vjp_square([2, 3], weights [1, 2]) gave {got.tolist()}; the lesson gets [4.0, 12.0]'

