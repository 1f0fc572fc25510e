# kind: wrong
# probe: modified-network
# feedback: hooks
# Counts right, but leaves a forward hook on the caller's network on every call.
def count_saved(net, inputs, track):
    calls = []
    net.register_forward_hook(lambda module, args, out: calls.append(out.shape))
    packed = []

    def pack(t):
        packed.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t),             torch.set_grad_enabled(track):
        net(inputs)
    return len(packed), sum(t.numel() * t.element_size() for t in packed)


lesson_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
lesson_inputs = torch.ones(3, 4)
tracked = count_saved(lesson_net, lesson_inputs, True)
untracked = count_saved(lesson_net, lesson_inputs, False)
