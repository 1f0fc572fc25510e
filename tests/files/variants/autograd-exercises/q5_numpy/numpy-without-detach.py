# kind: wrong
# public: pass
# feedback: .numpy() refuses a tensor that requires grad.
def export_numpy(t):
    return t.cpu().numpy().copy()


print(export_numpy(torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)))
