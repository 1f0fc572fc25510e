# kind: wrong
# public: pass
# feedback: returned an array that changed when export_numpy was called again
_buffers = {}  # one output array per (shape, dtype), allocated once


def export_numpy(t):
    values = t.detach().cpu().numpy()
    key = (values.shape, values.dtype)
    if key not in _buffers:
        _buffers[key] = np.empty(values.shape, dtype=values.dtype)
    out = _buffers[key]
    out[...] = values  # a copy: writing to out never changes t
    return out


print(export_numpy(torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)))
