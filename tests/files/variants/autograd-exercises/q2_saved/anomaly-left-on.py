# kind: wrong
# public: pass
# feedback: returned with anomaly detection switched on
def count_saved(net, inputs, track):
    # "if a saved tensor is ever bad, autograd says where it was saved"; never switched off
    torch.autograd.set_detect_anomaly(True)
    calls, nbytes = 0, 0

    def pack(t):
        nonlocal calls, nbytes
        calls += 1
        nbytes += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.set_grad_enabled(track):
            net(inputs)
    return calls, nbytes


lesson_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
lesson_inputs = torch.ones(3, 4)
tracked = count_saved(lesson_net, lesson_inputs, True)
untracked = count_saved(lesson_net, lesson_inputs, False)
