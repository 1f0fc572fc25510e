# kind: wrong
# public: fail
# feedback: These are the network's parameters (how many, and their bytes), not the tensors autograd saved
def count_saved(net, inputs, track):
    if not track:
        return 0, 0
    params = list(net.parameters())  # "what autograd keeps" taken to be the weights
    return len(params), sum(p.numel() * p.element_size() for p in params)


lesson_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
lesson_inputs = torch.ones(3, 4)
tracked = count_saved(lesson_net, lesson_inputs, True)
untracked = count_saved(lesson_net, lesson_inputs, False)
