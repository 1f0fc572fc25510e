from otter.test_files import test_case

OK_FORMAT = False

name = "q1_accumulation"
points = 5

@test_case(points=1, hidden=False)
def test_lesson_values(uncleared, cleared):
    assert isinstance(uncleared, list) and isinstance(cleared, list), f'square_grads must return a list; got {type(uncleared).__name__}'
    assert all((type(v) is float for v in uncleared + cleared)), 'every entry must be a Python float: record p.grad.item(), not the tensor p.grad'
    assert uncleared == [4.0, 8.0, 12.0], f'square_grads(2.0, 3, clear=False) gave {uncleared}; the lesson prints [4.0, 8.0, 12.0]'
    assert cleared == [4.0, 4.0, 4.0], f'square_grads(2.0, 3, clear=True) gave {cleared}; the lesson prints [4.0, 4.0, 4.0]'

@test_case(points=0.5, hidden=False)
def test_reuse_raises_is_bool(reuse_raises):
    assert isinstance(reuse_raises, bool), f'reuse_raises must be True or False, not {reuse_raises!r}'

