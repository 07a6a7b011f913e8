"""The round's health figures: program shapes and the two-rounds-running warning."""

from selfplay.engine.health import falling, program_shape


def test_programs_that_differ_only_in_constants_or_names_share_a_shape():
    a = program_shape("def f(x):\n    return x + 1\n")
    assert a == program_shape("def f(y):\n    return y + 7\n")
    assert a != program_shape("def f(x):\n    return x * 1\n")
    assert a != program_shape("def f(x):\n    return x + 'a'\n")  # another type of constant


def test_a_figure_falls_only_when_it_fell_in_each_of_the_last_two_rounds():
    rows = [{"diversity": v} for v in (0.9, 0.8, 0.7)]
    assert falling(rows, "diversity")
    assert not falling(rows[:2], "diversity")  # one fall is no trend
    assert not falling([{"diversity": v} for v in (0.9, 0.7, 0.8)], "diversity")
    assert not falling([{"diversity": v} for v in (0.9, 0.9, 0.8)], "diversity")
    assert not falling([{"diversity": 0.9}, {"diversity": None}, {"diversity": 0.1}], "diversity")
