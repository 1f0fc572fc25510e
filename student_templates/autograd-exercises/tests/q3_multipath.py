from otter.test_files import test_case

OK_FORMAT = False

name = "q3_multipath"
points = 4

@test_case(points=1, hidden=False)
def test_lesson_point(multipath_grads, split_path_grads):
    whole = multipath_grads(3.0, 4.0)
    assert isinstance(whole, tuple) and len(whole) == 2, f'multipath_grads must return a tuple (x.grad, y.grad); got {whole!r}'
    assert all((type(v) is float for v in whole)), f'both gradients must be Python floats (use .item()); got {whole!r}'
    assert whole == (10.0, 3.0), f'multipath_grads(3.0, 4.0) gave {whole}; the lesson gets (10.0, 3.0)'
    parts = split_path_grads(3.0, 4.0)
    assert isinstance(parts, tuple) and all((type(v) is float for v in parts)), f'split_path_grads must return a tuple of two Python floats; got {parts!r}'
    assert parts == (4.0, 6.0), f'split_path_grads(3.0, 4.0) gave {parts}; the lesson gets (4.0, 6.0)'
    assert multipath_grads(3, 4) == (10.0, 3.0), 'multipath_grads(3, 4) with int arguments must give (10.0, 3.0): convert to float first'

