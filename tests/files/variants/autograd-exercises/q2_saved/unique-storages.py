# kind: wrong
# public: fail
# feedback: one tensor can be saved by several operations
def count_saved(net, inputs, track):
    seen = {}

    def pack(tensor):
        # deduplicated by storage: a tensor saved twice is counted once
        seen[tensor.untyped_storage().data_ptr()] = tensor.numel() * tensor.element_size()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.set_grad_enabled(track):
            net(inputs)
    return len(seen), sum(seen.values())


lesson_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
lesson_inputs = torch.ones(3, 4)
tracked = count_saved(lesson_net, lesson_inputs, True)
untracked = count_saved(lesson_net, lesson_inputs, False)
