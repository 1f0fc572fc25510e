# kind: correct
# public: pass
# feedback:
class MyOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x ** 3).sum() / (1 + x.abs().sum())

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        S, A = (x ** 3).sum(), x.abs().sum()
        return grad_output * (3 * x ** 2 / (1 + A) - S * torch.sign(x) / (1 + A) ** 2)


def my_op(x):
    return MyOp.apply(x)


def check_my_op(x):
    x64 = torch.tensor(x.tolist(), dtype=torch.float64, requires_grad=True)
    return torch.autograd.gradcheck(my_op, (x64,), eps=1e-6, atol=1e-8, raise_exception=False)
