# kind: wrong
# public: pass
# feedback: backward read state kept outside ctx
_saved = {}


class MyOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        S, A = (x ** 3).sum(), x.abs().sum()
        _saved["grad"] = 3 * x ** 2 / (1 + A) - S * torch.sign(x) / (1 + A) ** 2
        return S / (1 + A)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * _saved["grad"]


def my_op(x):
    return MyOp.apply(x)


def check_my_op(x):
    x64 = x.detach().to(torch.float64).requires_grad_()
    return torch.autograd.gradcheck(my_op, (x64,), eps=1e-6, atol=1e-8, raise_exception=False)
