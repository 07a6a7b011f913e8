"""Runs `SelfPlay` with the scripted backend, as a real process that tests kill.

Usage: python run_scripted.py BANK ROUNDS [DELAY_S]. Every completion takes DELAY_S, and
the number of completions this process has produced is kept in `BANK.progress`, so a test can
kill it at points chosen from the run's own progress rather than by wall-clock guesses.
Proposals vary with a counter kept next to the bank, so a restarted process proposes new
programs instead of repeating the killed one's. Both files are replaced atomically: a SIGKILL
never leaves them empty.
"""

import os
import sys
import time
from pathlib import Path

from selfplay.backends.base import Prompt
from selfplay.backends.scripted import ScriptedBackend
from selfplay.config import RunConfig
from selfplay.engine import SelfPlay
from selfplay.verifier import Verifier
from task_bank.store import Bank


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def script(counter: Path, progress: Path, delay: float):
    done = [0]

    def reply(prompt: Prompt, index: int) -> str:
        time.sleep(delay)
        done[0] += 1
        write_atomically(progress, str(done[0]))
        if prompt.prefill.endswith("def f("):  # a proposal's program
            k = int(counter.read_text()) if counter.exists() else 2
            write_atomically(counter, str(k + 1))
            return f'x):\n    """Return {k} times x plus one."""\n    return x * {k} + 1\n```'
        if prompt.prefill.endswith("f("):  # a proposal's inputs
            return "1)\nf(2)\nf(5)\nf(-3)\n```"
        # solver answers: whole responses
        return "```python\n7\n```" if index % 2 else "```python\ndef f(x):\n    return x\n```"

    return reply


def main() -> None:
    bank_path, rounds = Path(sys.argv[1]), int(sys.argv[2])
    delay = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    config = RunConfig.model_validate(
        {
            "rounds": rounds,
            "proposer": {"proposals_per_kind": 2},
            "solver": {"tasks": 2, "samples": 2},
        }
    )
    counter, progress = bank_path.with_suffix(".counter"), bank_path.with_suffix(".progress")
    progress.unlink(missing_ok=True)
    backend = ScriptedBackend("scripted", script=script(counter, progress, delay))
    with Bank(bank_path) as bank, Verifier(workers=2, timeout_s=3.0) as verifier:
        engine = SelfPlay(bank, backend, verifier, config)
        point = engine.resume_point()
        if point is not None:  # as `selfplay run` says it
            print(f"resuming {point}", file=sys.stderr, flush=True)
        for summary in engine.run():
            print(f"round {summary.round}: admitted {summary.admitted}", flush=True)


if __name__ == "__main__":
    main()
