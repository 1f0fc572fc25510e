# kind: wrong
# public: pass
# feedback: backward read state kept outside ctx
class MyOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        MyOp.saved_x = x.detach()  # one slot for every graph: the next forward overwrites it
        return (x ** 3).sum() / (1 + x.abs().sum())

    @staticmethod
    def backward(ctx, grad_output):
        x = MyOp.saved_x
        S, A = (x ** 3).sum(), x.abs().sum()
        return grad_output * (3 * x ** 2 / (1 + A) - S * torch.sign(x) / (1 + A) ** 2)


def my_op(x):
    return MyOp.apply(x)


def check_my_op(x):
    x64 = x.detach().to(torch.float64).requires_grad_()
    return torch.autograd.gradcheck(my_op, (x64,), eps=1e-6, atol=1e-8, raise_exception=False)
