# kind: advised
# public: pass
# feedback: divides 0 by 0; torch.sign(x) gives 0 at 0
from torch.autograd.gradcheck import GradcheckError


class MyOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        num = torch.sum(x ** 3)
        den = 1.0 + torch.sum(torch.abs(x))
        return num / den

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        num = torch.sum(x ** 3)
        den = 1.0 + torch.sum(torch.abs(x))
        sign = x / x.abs()  # inputs are away from 0
        grad = 3 * x ** 2 / den - num * sign / den ** 2
        return grad * grad_output


def my_op(x):
    return MyOp.apply(x)


def check_my_op(x):
    inputs = (x.detach().clone().to(dtype=torch.float64).requires_grad_(),)
    try:
        return torch.autograd.gradcheck(my_op, inputs, eps=1e-6, atol=1e-8,
                                        raise_exception=True)
    except GradcheckError:
        return False


lesson_x = torch.tensor([-1.5, -0.5, 0.7, 2.0], dtype=torch.float64)
print(check_my_op(lesson_x))
