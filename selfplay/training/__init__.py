"""Training: fine-tune the solver and the proposer on a bank (TRL + peft).

```python
from selfplay.config import TrainConfig
from selfplay.training import train
from task_bank import Bank

with Bank("selfplay.db") as bank:
    result = train(bank, TrainConfig(method="sft", model="smollm2-135m", max_steps=8), "out/sft")
# out/sft is a model directory: selfplay run --model out/sft, selfplay eval humaneval --model out/sft
```

GRPO's prompts come from the curriculum (a scheduler picks each batch from the bank) and its
rollouts are written back to the bank; SFT is expert iteration on verified solutions; DPO
pairs passing and failing attempts (solver) or better and worse proposals (proposer); ei
samples, grades and trains on the model's own passing attempts, iteration after iteration.

Each method is one module (`sft.py`, `dpo.py`, `grpo.py`, `expert.py`) with
`build(ctx: TrainContext) -> Job`, registered by name in `selfplay.methods`; a method defined
elsewhere is registered there too, and `train` runs it like the built-in ones.
"""

from selfplay.training.context import TrainContext, Trained, TrainError
from selfplay.training.data import TrainDataError
from selfplay.training.trainer import TrainResult, train, trained_marker

__all__ = [
    "TrainContext",
    "TrainDataError",
    "TrainError",
    "TrainResult",
    "Trained",
    "train",
    "trained_marker",
]
