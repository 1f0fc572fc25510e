# kind: wrong
# probe: read-in-storage-order
# feedback: consecutive elements of the memory t views
# Reads the tensor's memory in storage order "to avoid a copy through Python", which is only
# the element order of a contiguous tensor.
def export_numpy(t):
    flat = t.detach().flatten()
    data = torch.as_strided(t.detach(), (t.numel(),), (1,), t.storage_offset())
    return data.clone().numpy().reshape(tuple(t.shape)) if not t.is_contiguous() else flat.clone().numpy().reshape(tuple(t.shape))


print(export_numpy(torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)))
