# kind: wrong
# public: pass
# feedback: the export changed the dtype (going through Python lists or astype does that).
def export_numpy(t):
    return np.array(t.detach().tolist(), dtype=np.float32)  # the lesson's tensors are float32


print(export_numpy(torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)))
