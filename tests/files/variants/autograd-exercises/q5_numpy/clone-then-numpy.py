# kind: correct
# public: pass
# feedback:
def export_numpy(t):
    return t.detach().clone().numpy()


print(export_numpy(torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)))
