# kind: wrong
# public: pass
# feedback: it checked the op somewhere other than x too
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
    # "more thorough": also check at -x and at a random point, and ask all three to pass
    points = [x.detach().double(), -x.detach().double(), torch.randn(x.shape, dtype=torch.float64)]
    return all(torch.autograd.gradcheck(my_op, (p.clone().requires_grad_(),), eps=1e-6,
                                        atol=1e-8, raise_exception=False) for p in points)


lesson_x = torch.tensor([-1.5, -0.5, 0.7, 2.0], dtype=torch.float64)
print(my_op(lesson_x))
print(check_my_op(lesson_x))
