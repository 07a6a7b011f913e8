import pytest

from selfplay.verifier import InvalidRow, IOTest, parse_row


def test_parses_string_and_io_tests_and_ignores_unknown_fields():
    row = parse_row(
        {
            "id": "a",
            "program": "x=1",
            "tests": ["assert x == 1", {"input": "1", "output": "2"}],
            "extra": 1,
            "timeout_s": 2,
            "memory_mb": 256,
        }
    )
    assert row.tests == ["assert x == 1", IOTest("1", "2")]
    assert (row.timeout_s, row.memory_mb) == (2.0, 256)


@pytest.mark.parametrize(
    "obj, field",
    [
        ([], "JSON object"),
        ({"program": "", "tests": []}, "'id'"),
        ({"id": 1, "program": "", "tests": []}, "'id'"),
        ({"id": "a", "tests": []}, "'program'"),
        ({"id": "a", "program": "", "tests": "assert 1"}, "'tests'"),
        ({"id": "a", "program": "", "tests": [{"input": "1"}]}, "test 0"),
        ({"id": "a", "program": "", "tests": [], "timeout_s": -1}, "'timeout_s'"),
        ({"id": "a", "program": "", "tests": [], "timeout_s": True}, "'timeout_s'"),
        ({"id": "a", "program": "", "tests": [], "memory_mb": 10**9}, "'memory_mb'"),
        ({"id": "a", "program": "", "tests": [], "calls": [1]}, "'calls'"),
    ],
)
def test_rejects_malformed_rows_with_a_sentence_naming_the_field(obj, field):
    with pytest.raises(InvalidRow, match=field):
        parse_row(obj)


def test_invalid_rows_get_status_invalid_and_the_rest_still_run(verifier_5s_512mb):
    verdicts = verifier_5s_512mb.grade(
        [
            {"id": "bad", "program": 3, "tests": []},
            {"id": "good", "program": "def f():\n    return 1\n", "tests": ["assert f() == 1"]},
        ]
    )
    assert [v.status for v in verdicts] == ["invalid", "passed"]
    assert "program" in verdicts[0].detail
