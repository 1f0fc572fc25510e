# kind: correct
# probe: none
# feedback:
# Unusual but right: flags, mode and hooks changed during the count and all put back.
def count_saved(net, inputs, track):
    flags = [p.requires_grad for p in net.parameters()]
    mode = net.training
    handle = net.register_forward_hook(lambda *a: None)
    sizes = []

    def pack(t):
        sizes.append(t.numel() * t.element_size())
        return t

    try:
        net.eval()
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            if track:
                net(inputs)
            else:
                with torch.inference_mode():
                    net(inputs)
    finally:
        handle.remove()
        net.train(mode)
        for p, flag in zip(net.parameters(), flags):
            p.requires_grad_(flag)
    return len(sizes), sum(sizes)


lesson_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
lesson_inputs = torch.ones(3, 4)
tracked = count_saved(lesson_net, lesson_inputs, True)
untracked = count_saved(lesson_net, lesson_inputs, False)
