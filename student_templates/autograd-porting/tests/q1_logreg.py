from otter.test_files import test_case

OK_FORMAT = False

name = "q1_logreg"
points = 6

@test_case(points=1, hidden=False)
def test_lesson_trajectory(losses, train_accuracy):
    import torch
    assert isinstance(losses, list) and all((type(v) is float for v in losses)), 'losses must be a list of Python floats: append loss.item() each step'
    assert len(losses) == 300, f'with the default steps=300 expected 300 losses, got {len(losses)}'
    got = [round(losses[k], 4) for k in (0, 100, 200)]
    assert got == [0.6931, 0.1622, 0.1277], f'losses at steps 0, 100, 200 are {got}; the lesson prints [0.6931, 0.1622, 0.1277]'
    assert isinstance(train_accuracy, float), 'train_accuracy must be a Python float (.item())'
    assert abs(train_accuracy - 0.975) < 1e-06, f'train_accuracy is {train_accuracy}; the lesson prints 0.975'

@test_case(points=0.5, hidden=False)
def test_shapes_and_closed_form(w, b, X, y, logreg_grads):
    import torch
    assert isinstance(w, torch.Tensor) and tuple(w.shape) == (5,), 'w must be a tensor of shape (5,)'
    assert isinstance(b, torch.Tensor) and tuple(b.shape) == (1,), 'b must be a tensor of shape (1,)'
    w0 = torch.zeros(5, requires_grad=True)
    b0 = torch.zeros(1, requires_grad=True)
    torch.nn.functional.binary_cross_entropy_with_logits(X @ w0 + b0, y).backward()
    grad_w, grad_b = logreg_grads(X, y, torch.zeros(5), torch.zeros(1))
    assert tuple(grad_w.shape) == (5,), f'grad_w has shape {tuple(grad_w.shape)}; expected (5,)'
    assert torch.allclose(grad_w, w0.grad, atol=1e-06), f'logreg_grads at w = 0, b = 0 gave {grad_w}; autograd gives {w0.grad}'
    assert torch.allclose(grad_b.reshape(1), b0.grad, atol=1e-06), f'the bias gradient at w = 0, b = 0 is {grad_b}; autograd gives {b0.grad}'

