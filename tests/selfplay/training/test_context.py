"""Training grades with the verifier its config describes, for every method."""

from __future__ import annotations

from pathlib import Path

from selfplay.config import TrainConfig
from selfplay.config.loop import load_loop_config
from selfplay.training.context import TrainContext


def _context(config: TrainConfig) -> TrainContext:
    return TrainContext(bank=None, config=config, out=Path("."), base="", model_id="m",  # type: ignore[arg-type]
                        common={}, peft=None, exclude=set(), proposer_gains=None, cuda=False,
                        progress=lambda *a, **k: None, resume=False)  # fmt: skip


def test_the_verifier_takes_the_configured_workers_timeout_and_packages():
    config = TrainConfig(verifier={"workers": 3, "timeout_s": 2.5, "packages": ["numpy"]})
    with _context(config).verifier() as verifier:
        assert type(verifier).__name__ == "Verifier"
        assert verifier.n_workers == 3 and verifier.limits.timeout_s == 2.5
        assert verifier.packages == ("numpy",)


def test_a_loop_trains_grading_where_its_round_grades():
    config = load_loop_config(None, **{"run.verifier.ray": "local",
                                       "run.verifier.packages": ["numpy", "scipy"]})  # fmt: skip
    assert config.solver.verifier.ray == "local"
    assert config.solver.verifier.packages == ["numpy", "scipy"]
    # Said under solver:, training's own setting stands.
    own = load_loop_config(None, **{"run.verifier.ray": "local",
                                    "solver.verifier.packages": ["pandas"]})  # fmt: skip
    assert own.solver.verifier.packages == ["pandas"] and own.solver.verifier.ray == "local"


def test_the_flat_key_of_earlier_configs_still_sets_the_workers():
    assert TrainConfig.model_validate({"verifier_workers": 4}).verifier.workers == 4
