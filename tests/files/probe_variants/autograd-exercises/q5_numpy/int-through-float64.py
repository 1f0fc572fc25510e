# kind: wrong
# probe: values-through-float
# feedback: rounded to the nearest float64
# Every tensor goes through float64 "which holds float32, float64 and int64 values exactly",
# then back to its own dtype: int64 values above 2**53 come back rounded.
_NP = {torch.float32: np.float32, torch.float64: np.float64, torch.int64: np.int64}


def export_numpy(t):
    return t.detach().cpu().to(torch.float64).numpy().astype(_NP[t.dtype])


print(export_numpy(torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)))
