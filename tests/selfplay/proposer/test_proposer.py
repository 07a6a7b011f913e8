"""`Proposer.propose` with a replayed model, the real sandboxed verifier and a real bank:
every rejection reason is counted, admitted tasks carry provenance, and the outputs in
a task are always the verifier's, never the model's."""

import pytest

from selfplay.admission import Admission, AdmissionConfig
from selfplay.admission.decontam import Decontaminator
from selfplay.admission.schema import parse_task
from selfplay.config import ProposerConfig
from selfplay.proposer import Proposer

INPUTS = "1)\nf(2)\nf(3)\nf(-4)\nf(10)\n"


@pytest.fixture()
def propose(replay):
    def run(
        admission_,
        programs,
        kind="deduction",
        inputs=(INPUTS,),
        references=(),
        synthesized=10,
        docstrings=(),
        **limits,
    ):
        backend = replay(programs, inputs, docstrings)
        if limits:  # what a proposal must satisfy is admission's
            admission_.config = admission_.config.model_copy(update=limits)
        config = ProposerConfig(proposals_per_kind=len(programs), synthesized_inputs=synthesized)
        proposer = Proposer(backend, admission_, config)
        return proposer.propose(kind, list(references), round_id=None), backend

    return run


def only(report, reason):
    assert report.admitted_ids == []
    assert dict(report.rejected) == {reason: report.proposed}


def test_a_valid_proposal_is_admitted_with_provenance(admission, reference, bank, propose):
    program = "x):\n    return x * x - 3\n```"
    inputs = ("1) == 999\nf(2)\nf(-5)\n```",)  # the model's claimed output is ignored
    report, backend = propose(admission, [program], inputs=inputs, references=[reference])
    assert report.proposed == 1 and len(report.admitted_ids) == 1 and not report.rejected
    task = bank.get(report.admitted_ids[0])
    assert task.source == "selfplay" and task.parent_ids == ["ref-double"]
    assert task.proposer == "replay-model" and task.kind == "deduction"
    assert task.program == "def f(x):\n    return x * x - 3\n"
    assert task.examples[:3] == [
        {"input": "1", "output": "-2"},
        {"input": "2", "output": "1"},
        {"input": "-5", "output": "22"},
    ]
    assert "assert f(1) == -2" in task.tests
    # The reference is shown in the program prompt; the input prompt shows only the new program.
    assert "return 2 * x" in backend.prompts[0].messages[-1]["content"]
    assert "return 2 * x" not in backend.prompts[1].messages[-1]["content"]


def test_garbage_text_is_counted_not_raised(admission, propose):
    report, _ = propose(admission, ["\x00\x01 ))) ``` ``` 🙃", "", "```"])
    assert report.proposed == 3 and not report.admitted_ids
    assert sum(report.rejected.values()) == 3
    assert set(report.rejected) <= {"unparseable", "no_code"}


def test_program_that_raises_on_load(admission, propose):
    report, _ = propose(admission, ["x):\n    return x\nraise SystemExit(3)\n"])
    only(report, "run_error")


def test_program_that_runs_too_long(admission, propose):
    report, _ = propose(admission, ["x):\n    while True:\n        x += 1\n"])
    only(report, "run_timeout")


def test_program_that_changes_between_runs(admission, propose):
    # Passes the static check (the clock is reached through __import__) but not the two runs.
    program = "x):\n    return x + __import__('time').perf_counter_ns() % 1000003\n"
    report, _ = propose(admission, [program])
    only(report, "nondeterministic")


def test_output_that_is_not_plain_data(admission, propose):
    report, _ = propose(admission, ["x):\n    return object()\n"])
    only(report, "output_not_plain_data")


def test_output_too_large(admission, propose):
    report, _ = propose(admission, ["x):\n    return 'ab' * 5000\n"], max_output_chars=1000)
    only(report, "output_too_large")


def test_output_that_is_not_a_literal(admission, propose):
    # A Counter's repr is no value an answer can write (nan, inf and frozenset() are).
    report, _ = propose(
        admission,
        ["x):\n    return __import__('collections').Counter(str(x))\n"],
    )
    only(report, "output_not_literal")


def test_outputs_like_nan_and_frozensets_are_values(admission, bank, propose):
    report, _ = propose(admission, ["x):\n    return float('nan') if x > 1 else frozenset()\n"])
    task = bank.get(report.admitted_ids[0])
    assert {e["output"] for e in task.examples} <= {"nan", "frozenset()"}


def test_every_input_raises(admission, propose):
    report, _ = propose(admission, ["x):\n    return x // 0\n"])
    only(report, "input_raises")


def test_a_raising_input_is_dropped_when_two_others_run(admission, bank, propose):
    report, _ = propose(
        admission, ["x):\n    return 10 // x\n"], inputs=("0)\nf(5)\nf(2)\n",), synthesized=0
    )
    task = bank.get(report.admitted_ids[0])
    assert [e["input"] for e in task.examples] == ["5", "2"]
    assert task.tests == ["assert f(5) == 2", "assert f(2) == 5"]


def test_a_raising_input_rejects_when_fewer_than_two_others_run(admission, propose):
    report, _ = propose(
        admission, ["x):\n    return 10 // x\n"], inputs=("0)\nf(5)\n",), synthesized=0
    )
    only(report, "input_raises")


def test_a_list_program_given_integers_is_admitted_through_synthesised_inputs(
    admission, bank, propose
):
    # The shape of the programs a small model writes and then calls with integers.
    program = (
        "ana):\n    total = 1\n    for element in ana:\n"
        "        total = total * 3 + element % 5\n    return total\n"
    )
    report, _ = propose(admission, [program], inputs=("98)\nf(2)\nf(0)\nf(1)\n",))
    task = bank.get(report.admitted_ids[0])
    assert all(e["input"].startswith("[") for e in task.examples)
    assert task.metadata["synthesized_inputs"] == len(task.examples) >= 2
    # Without synthesis the model's integers are all the program gets, and all raise.
    report, _ = propose(admission, [program], inputs=("98)\nf(2)\n",), synthesized=0)
    only(report, "input_raises")


@pytest.mark.parametrize(
    ("program", "reason"),
    [("x):\n    return 7\n", "constant_output"), ("x):\n    return x\n", "returns_input")],
)
def test_constant_and_identity_programs_are_rejected_with_synthesised_inputs(
    admission, propose, program, reason
):
    report, backend = propose(admission, [program], inputs=("1)\nf(2)\n",))
    only(report, reason)


def test_too_few_literal_inputs(admission, propose):
    report, _ = propose(
        admission, ["x):\n    return x + 1\n"], inputs=("x)\nf(y)\nnothing\n",), synthesized=0
    )
    only(report, "too_few_inputs")


def test_constant_output_is_no_induction_task(admission, propose):
    report, _ = propose(admission, ["x):\n    return 7\n"], kind="induction")
    only(report, "constant_output")


def test_static_reasons_reach_the_report(admission, propose):
    report, _ = propose(admission, ["x):\n    import random\n    return random.random() + x\n"])
    only(report, "unseeded_randomness")


def test_a_copy_of_the_reference_is_a_duplicate(admission, reference, propose):
    report, _ = propose(admission, ["y):\n    return 2 * y\n"], inputs=("3)\nf(4)\n",))
    only(report, "duplicate")


def test_same_behaviour_in_other_words_is_a_near_duplicate(admission, propose):
    loop = "    total = 0\n    for i in range(x):\n        if i % 3 == 0:\n            total += {}\n    return total\n"
    original = parse_task(
        {
            "kind": "deduction",
            "prompt": "Predict the value that `f` returns.",
            "program": "def f(x):\n" + loop.format("i * 2"),
            "entry_point": "f",
            "tests": ["assert f(4) == 6"],
            "examples": [{"input": "7", "output": None}],
        }
    )
    assert admission.admit([original]).admitted == 1
    report, _ = propose(admission, ["x):\n" + loop.format("2 * i")], inputs=("7)\nf(4)\n",))
    only(report, "near_duplicate")


def test_two_equal_proposals_in_one_batch_admit_one(admission, propose):
    program = "x):\n    return x ** 3 + 1\n"
    report, _ = propose(admission, [program, program])
    assert len(report.admitted_ids) == 1 and dict(report.rejected) == {"duplicate": 1}


def test_benchmark_look_alikes_are_not_counted_as_admitted(bank, verifier_3s_512mb, propose):
    decontaminator = Decontaminator()
    decontaminator.add("Bench/1", "", "def f(x):\n    return x * 5 - 1\n")
    admission = Admission(
        bank, verifier_3s_512mb, AdmissionConfig(timeout_s=3.0), decontaminator=decontaminator
    )
    report, _ = propose(admission, ["x):\n    return x * 5 - 1\n"])
    # Counted once, as flagged: neither admitted nor rejected.
    assert report.admitted_ids == [] and report.flagged == 1 and not report.rejected
    assert [p.outcome for p in report.proposals] == ["contaminated"]
    # Kept and flagged, so it stays out of every schedule and export.
    (flagged,) = bank.tasks(source="selfplay", include_contaminated=True)
    assert flagged.contaminated and not list(bank.tasks(source="selfplay"))


@pytest.mark.parametrize("kind", ["codegen", "deduction", "abduction", "induction"])
def test_each_kind_makes_a_task(admission, bank, kind, propose):
    program = 'x):\n    """Return three times x, minus the last digit of x."""\n    return 3 * x - abs(x) % 10\n'
    report, _ = propose(admission, [program], kind=kind)
    assert len(report.admitted_ids) == 1, report.rejected
    task = bank.get(report.admitted_ids[0])
    assert task.kind == kind and len(task.examples) == 5
    if kind == "codegen":
        assert task.prompt.startswith("Write `f(x)`.") and "three times x" in task.prompt
        # Two of its five tests are shown as calls with their results; three stay unseen.
        assert task.prompt.count(">>> f(") == 2 and ">>> f(1)\n2\n>>> f(2)\n4" in task.prompt


def test_rejections_are_recorded_in_the_bank(admission, bank, propose):
    propose(admission, ["x):\n    return (x\n", "x):\n    return object()\n"])
    counts = bank.rejection_counts()
    assert counts.get("unparseable") == 1 and counts.get("output_not_plain_data") == 1


def test_the_number_of_programs_follows_the_engine_unless_the_config_says(admission):
    from selfplay.backends.auto import AutoBackend
    from selfplay.backends.scripted import ScriptedBackend
    from selfplay.proposer.proposer import PROPOSALS_DEFAULT, PROPOSALS_VLLM

    transformers_like = ScriptedBackend(script=["x"])
    assert Proposer(transformers_like, admission).count() == PROPOSALS_DEFAULT

    class ChoseVLLM(AutoBackend):  # auto after it chose vLLM, without loading a model
        def _load(self):
            self.chosen = "vllm"

    vllm_like = ChoseVLLM("smollm2-135m")
    assert Proposer(vllm_like, admission).count() == PROPOSALS_VLLM > PROPOSALS_DEFAULT
    fixed = Proposer(vllm_like, admission, ProposerConfig(proposals_per_kind=5))
    assert fixed.count() == 5


def test_a_codegen_program_without_a_docstring_gets_one_from_the_prefilled_prompt(
    admission, bank, propose
):
    program = "xs):\n    return sum(1 for x in xs if x % 2 == 0) * 3 - len(xs)\n```"
    doc = 'Return three times the count of even numbers in xs, minus the length of xs.\n    """'
    report, backend = propose(
        admission, [program], kind="codegen", inputs=("[1, 2])\nf([4, 6, 8])\n",), docstrings=[doc]
    )
    task = bank.get(report.admitted_ids[0])
    assert '"""Return three times the count of even numbers' in task.program
    assert "Return three times the count" in task.prompt
    assert task.metadata["repaired"] == "docstring" and report.repaired == {"docstring": 1}
    # The docstring prompt opens the docstring under the program's own first line.
    asked = [p for p in backend.prompts if p.prefill.endswith('"""')]
    assert len(asked) == 1 and asked[0].prefill.endswith('def f(xs):\n    """')


def test_an_unusable_docstring_answer_leaves_the_program_rejected(admission, propose):
    program = "xs):\n    return sorted(xs)[::-1][:2]\n```"
    report, _ = propose(admission, [program], kind="codegen", docstrings=['Sort."""'])
    only(report, "no_description")
    assert not report.repaired


def test_a_program_cut_off_or_followed_by_prose_is_trimmed_once(admission, bank, propose):
    program = "x):\n    y = x * 7\n    return y - 2\nThis function multiplies x by 7 and\n"
    report, _ = propose(admission, [program])
    task = bank.get(report.admitted_ids[0])
    assert task.program == "def f(x):\n    y = x * 7\n    return y - 2\n"
    assert report.repaired == {"trimmed": 1}


@pytest.mark.parametrize("kind", ["deduction", "abduction", "induction", "codegen"])
def test_the_program_prompt_asks_for_the_configured_length(admission, kind, replay):
    backend = replay(['x):\n    """Return x plus 5."""\n    return x + 5\n'], (INPUTS,), ())
    config = ProposerConfig(proposals_per_kind=1, max_lines=4)
    Proposer(backend, admission, config).propose(kind, [], round_id=None)
    program_prompt = backend.prompts[0].messages[-1]["content"]
    assert "at most 4 lines" in program_prompt and "12 lines" not in program_prompt
