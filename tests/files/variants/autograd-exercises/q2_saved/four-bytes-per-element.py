# kind: wrong
# public: pass
# feedback: The bytes assume 4 per element, but this network is float64: use element_size().
def count_saved(net, inputs, track):
    sizes = []

    def pack(tensor):
        sizes.append(tensor.numel() * 4)  # "a float is 4 bytes"
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        if track:
            net(inputs)
        else:
            with torch.no_grad():
                net(inputs)
    return len(sizes), sum(sizes)


lesson_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
lesson_inputs = torch.ones(3, 4)
tracked = count_saved(lesson_net, lesson_inputs, True)
untracked = count_saved(lesson_net, lesson_inputs, False)
