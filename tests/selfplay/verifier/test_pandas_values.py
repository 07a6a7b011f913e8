"""pandas Series and DataFrames of plain data cross as data both ways, so
`pd.testing.assert_series_equal` and `assert_frame_equal` judge a program's frames by their
values; a wrong frame still fails, and a frame that is not plain data stays a handle."""

from __future__ import annotations

import pytest

pytest.importorskip("pandas")

PROGRAM = """import pandas as pd
def series():
    return pd.Series([1.5, 2.0, None], name="x")
def frame():
    return pd.DataFrame({"a": [1, 2], "b": ["x", "y"], "c": [True, False]}, index=[10, 20])
def add_one(df):
    out = df.copy()
    out["a"] = out["a"] + 1
    return out
def wrong():
    return pd.DataFrame({"a": [1, 3], "b": ["x", "y"], "c": [True, False]}, index=[10, 20])
def dated():
    return pd.Series(pd.to_datetime(["2024-01-01", "2024-02-01"]), index=pd.Index(["p", "q"]))
class Thing:
    pass
def objects():
    return pd.Series([Thing(), Thing()])
def categories():
    return pd.Series(["a", "b"], dtype="category")
"""
EXPECTED_FRAME = "pd.DataFrame({'a': [1, 2], 'b': ['x', 'y'], 'c': [True, False]}, index=[10, 20])"
TESTS = {
    "series": "pd.testing.assert_series_equal(series(), pd.Series([1.5, 2.0, None], name='x'))",
    "frame": f"pd.testing.assert_frame_equal(frame(), {EXPECTED_FRAME})",
    "argument": "f = pd.DataFrame({'a': [1, 2]})\n"
    "pd.testing.assert_frame_equal(add_one(f), pd.DataFrame({'a': [2, 3]}))\n"
    "assert f['a'].tolist() == [1, 2]",
    "dates": "pd.testing.assert_series_equal(dated(), pd.Series(pd.to_datetime(['2024-01-01', "
    "'2024-02-01']), index=pd.Index(['p', 'q'])))",
    "wrong": f"pd.testing.assert_frame_equal(wrong(), {EXPECTED_FRAME})",
    "objects": "assert type(objects()) is not pd.Series",
    "categories": "assert type(categories()) is not pd.Series",
}


def test_pandas_values_cross_as_data_and_are_judged_by_their_values(verifier):
    rows = [{"id": k, "program": PROGRAM, "tests": ["import pandas as pd\n" + t]}
            for k, t in TESTS.items()]  # fmt: skip
    got = {v.id: (v.passed, v.detail[:120]) for v in verifier.grade(rows)}
    assert {k: p for k, (p, _) in got.items()} == {
        "series": True, "frame": True, "argument": True, "dates": True, "wrong": False,
        "objects": True, "categories": True}, got  # fmt: skip
    assert "are different" in got["wrong"][1]
