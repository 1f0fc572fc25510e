# kind: wrong
# public: fail
# feedback: the array shares t's memory
def export_numpy(t):
    return t.detach().cpu().numpy()  # a view of t's storage, not a copy


print(export_numpy(torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)))
