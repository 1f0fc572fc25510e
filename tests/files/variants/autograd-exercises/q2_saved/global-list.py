# kind: wrong
# public: fail
# feedback: the counts carried over between calls.
saved = []  # made once, at module level, and never emptied


def pack(tensor):
    saved.append(tensor.numel() * tensor.element_size())
    return tensor


def count_saved(net, inputs, track):
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if track:
            net(inputs)
        else:
            with torch.no_grad():
                net(inputs)
    return len(saved), sum(saved)


lesson_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
lesson_inputs = torch.ones(3, 4)
tracked = count_saved(lesson_net, lesson_inputs, True)
untracked = count_saved(lesson_net, lesson_inputs, False)
