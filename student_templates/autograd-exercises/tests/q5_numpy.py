from otter.test_files import test_case

OK_FORMAT = False

name = "q5_numpy"
points = 4

@test_case(points=1, hidden=False)
def test_lesson_tensor(export_numpy):
    import numpy as np
    import torch
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float32)
    arr = export_numpy(a)
    assert isinstance(arr, np.ndarray), f'export_numpy must return a numpy.ndarray; got {arr!r}'
    assert arr.shape == (2, 2) and arr.dtype == np.float32, f'expected shape (2, 2) float32 like the tensor; got {arr.shape} {arr.dtype}'
    assert arr.tolist() == [[1.0, 2.0], [3.0, 4.0]], f'wrong values: {arr.tolist()}'
    arr[0, 0] = 99.0
    assert a[0, 0].item() == 1.0, 'writing arr[0, 0] = 99 changed the tensor too: the array shares its memory; copy it'

