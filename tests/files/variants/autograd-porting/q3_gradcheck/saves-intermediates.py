# kind: correct
# public: pass
# feedback:
from torch.autograd import gradcheck


class MyOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        S = x.pow(3).sum()
        D = 1 + x.abs().sum()
        ctx.save_for_backward(x, S, D)
        return S / D

    @staticmethod
    def backward(ctx, g):
        x, S, D = ctx.saved_tensors
        dS = 3 * x * x
        dD = x.sign()
        return g * (dS * D - S * dD) / D ** 2


def my_op(x):
    return MyOp.apply(x)


def check_my_op(x):
    x64 = torch.tensor(x.tolist(), dtype=torch.float64, requires_grad=True)
    return bool(gradcheck(lambda t: my_op(t), (x64,), eps=1e-6, atol=1e-8,
                          raise_exception=False))


lesson_x = torch.tensor([-1.5, -0.5, 0.7, 2.0], dtype=torch.float64)
print(check_my_op(lesson_x))
