from otter.test_files import test_case

OK_FORMAT = False

name = "q2_microbatch"
points = 4

@test_case(points=1, hidden=False)
def test_matches_full_batch(accumulated_grad):
    import torch
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(200, 5, generator=gen)
    true_w = torch.tensor([1.5, -2.0, 0.5, 0.0, 1.0])
    y = (X @ true_w + 0.1 * torch.randn(200, generator=gen) > 0).float()
    w_full = torch.zeros(5, requires_grad=True)
    torch.nn.functional.binary_cross_entropy_with_logits(X @ w_full, y).backward()
    for sizes in ([100, 100], [50, 150], [20, 30, 150]):
        got = accumulated_grad(torch.zeros(5, requires_grad=True), X, y, sizes)
        assert isinstance(got, torch.Tensor) and tuple(got.shape) == (5,), f'with sizes {sizes} expected a tensor of shape (5,), got {got!r}'
        g, e = (got.detach().double(), w_full.grad.double())
        ratio = float(g @ e / (e @ e))
        advice = 'every value is 0: was the gradient cleared, or never accumulated, before it was returned? Return w.grad.clone() after the last backward' if not g.abs().max() > 0 else f'every value is {ratio:.4g} times it (J = {len(sizes)} micro-batches, B = {sum(sizes)} rows): the b_j / B weights alone make the sum the mean, so nothing divides or multiplies it by a count' if torch.allclose(g, ratio * e, atol=1e-06) else "check that the micro-batches cover every row exactly once (each starts where the previous one ended: a running offset or torch.split) and that each micro-batch's mean loss is weighted by b_j / B"
        assert torch.allclose(got, w_full.grad, atol=1e-06), f'with sizes {sizes} the accumulated gradient is {got}, the full-batch mean gradient is {w_full.grad}: {advice}'

