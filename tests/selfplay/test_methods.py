"""The registry of training methods: one list of names, modules loaded only when chosen."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

from selfplay import methods
from selfplay.config import TrainConfig
from selfplay.methods import Method, get_method, register_method


def test_the_built_in_methods_in_their_order_with_the_roles_they_train():
    assert methods.names() == ["grpo", "sft", "dpo", "ei"]
    assert methods.names("proposer") == ["grpo", "sft", "dpo"]
    assert methods.choices() == "'grpo', 'sft', 'dpo' or 'ei'"
    assert get_method("ei").module == "selfplay.training.expert"
    # The config's help is the registry's.
    assert TrainConfig.model_fields["method"].description == methods.described()


def test_a_taken_name_an_unknown_role_and_an_object_without_build_are_refused():
    job = SimpleNamespace(build=lambda ctx: None)
    with pytest.raises(ValueError, match="already registered"):
        register_method(Method("sft", job))
    with pytest.raises(ValueError, match="roles are some of solver, proposer"):
        register_method(Method("critic", job, roles={"critic": ""}))
    with pytest.raises(ValueError, match="has no build"):
        register_method(Method("critic", SimpleNamespace()))
    with pytest.raises(ValueError, match="unknown training method 'critic'"):
        get_method("critic")


def test_configs_and_the_training_package_load_without_trl():
    """A base install reads a GRPO config and imports selfplay.training; TRL is imported
    when a method's module is loaded to train."""
    code = (
        "import sys\n"
        "sys.modules['trl'] = None\n"  # an import of trl now fails
        "import selfplay.training\n"
        "from selfplay.config import TrainConfig\n"
        "from selfplay.methods import get_method\n"
        "TrainConfig(method='grpo').check()\n"
        "try:\n"
        "    get_method('grpo').load()\n"
        "except ImportError:\n"
        "    print('loading grpo needs trl')\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "loading grpo needs trl"
