# kind: wrong
# public: fail
# feedback: torch.no_grad() was applied to the wrong run: the tracked forward saved nothing.
def count_saved(net, inputs, track):
    sizes = []

    def pack(tensor):
        sizes.append(tensor.numel() * tensor.element_size())
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if track:
            with torch.no_grad():  # "track" read the wrong way round
                net(inputs)
        else:
            net(inputs)
    return len(sizes), sum(sizes)


lesson_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
lesson_inputs = torch.ones(3, 4)
tracked = count_saved(lesson_net, lesson_inputs, True)
untracked = count_saved(lesson_net, lesson_inputs, False)
