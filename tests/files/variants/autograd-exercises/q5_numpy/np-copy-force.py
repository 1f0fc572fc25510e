# kind: correct
# public: pass
# feedback:
def export_numpy(t):
    shared = t.numpy(force=True)  # detaches and moves to CPU, but may share memory
    return np.copy(shared)


print(export_numpy(torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)))
