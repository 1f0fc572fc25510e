# kind: correct
# public: pass
# feedback:
def count_saved(net, inputs, track):
    counts = {"calls": 0, "bytes": 0}

    def pack(tensor):
        counts["calls"] += 1
        counts["bytes"] += tensor.nbytes
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor), \
            torch.set_grad_enabled(track):
        net(inputs)
    return counts["calls"], counts["bytes"]


lesson_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
lesson_inputs = torch.ones(3, 4)
tracked = count_saved(lesson_net, lesson_inputs, True)
untracked = count_saved(lesson_net, lesson_inputs, False)
