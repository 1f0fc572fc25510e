# kind: wrong
# public: pass
# feedback: part of backward is computed in half precision (float16 or bfloat16)
class MyOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x ** 3).sum() / (1 + x.abs().sum())

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        S, A = (x ** 3).sum(), x.abs().sum()
        sign = torch.sign(x).half()  # -1, 0 or 1: exact in any dtype
        return grad_output * (3 * x ** 2 / (1 + A) - S * sign / (1 + A) ** 2)


def my_op(x):
    return MyOp.apply(x)


def check_my_op(x):
    x64 = x.detach().to(torch.float64).requires_grad_(True)
    return torch.autograd.gradcheck(my_op, (x64,), eps=1e-6, atol=1e-8, raise_exception=False)


lesson_x = torch.tensor([-1.5, -0.5, 0.7, 2.0], dtype=torch.float64)
