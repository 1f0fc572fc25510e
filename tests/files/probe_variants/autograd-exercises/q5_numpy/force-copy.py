# kind: correct
# probe: none
# feedback:
# Unusual but right: numpy(force=True) detaches and moves, np.array copies, keeping the dtype.
def export_numpy(t):
    return np.array(t.numpy(force=True), copy=True, order="C")


print(export_numpy(torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)))
