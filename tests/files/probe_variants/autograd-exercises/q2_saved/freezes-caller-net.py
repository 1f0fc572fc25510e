# kind: wrong
# probe: modified-network
# feedback: net.0.weight.requires_grad became False
# Untracked runs "make sure" nothing is saved by freezing the parameters, and never unfreeze.
def count_saved(net, inputs, track):
    if not track:
        for p in net.parameters():
            p.requires_grad = False
    packed = []

    def pack(t):
        packed.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        net(inputs)
    return len(packed), sum(t.numel() * t.element_size() for t in packed)


lesson_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
lesson_inputs = torch.ones(3, 4)
tracked = count_saved(lesson_net, lesson_inputs, True)
untracked = count_saved(lesson_net, lesson_inputs, False)
