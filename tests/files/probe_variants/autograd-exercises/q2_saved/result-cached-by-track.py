# kind: wrong
# probe: counts-cached
# feedback: the answer was kept per network
# The counts are cached per (layer sizes, track) "because the network's shape decides them":
# the batch size and the dtype are forgotten.
_cache = {}


def count_saved(net, inputs, track):
    key = (tuple(p.shape for p in net.parameters()), track)
    if key not in _cache:
        packed = []
        with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t,
                                                      lambda t: t):
            with torch.set_grad_enabled(track):
                net(inputs)
        _cache[key] = (len(packed), sum(t.numel() * t.element_size() for t in packed))
    return _cache[key]


lesson_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
lesson_inputs = torch.ones(3, 4)
tracked = count_saved(lesson_net, lesson_inputs, True)
untracked = count_saved(lesson_net, lesson_inputs, False)
