# kind: correct
# public: pass
# feedback:
import contextlib


class Recorder:
    def __init__(self):
        self.shapes = []

    def pack(self, tensor):
        self.shapes.append((tensor.shape, tensor.element_size()))
        return tensor

    @staticmethod
    def unpack(tensor):
        return tensor


def count_saved(net, inputs, track):
    rec = Recorder()
    mode = contextlib.nullcontext() if track else torch.no_grad()
    with torch.autograd.graph.saved_tensors_hooks(rec.pack, rec.unpack):
        with mode:
            out = net(inputs)
    del out
    return len(rec.shapes), sum(shape.numel() * size for shape, size in rec.shapes)


lesson_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
lesson_inputs = torch.ones(3, 4)
tracked = count_saved(lesson_net, lesson_inputs, True)
untracked = count_saved(lesson_net, lesson_inputs, False)
