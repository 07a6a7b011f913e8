"""The task bank: verified tasks, solver attempts and rounds in one SQLite file.

```python
from selfplay.verifier import Verifier
from task_bank import Bank, Gate, import_source

with Verifier(workers=2) as v, Bank("selfplay.db") as bank:
    report = import_source("seeds", Gate(bank, v))   # verify, dedup, decontaminate, store
    stats = bank.solve_stats()                        # per-task counters for the curriculum
```
"""

from task_bank.gate import Gate, GateConfig, GateReport
from task_bank.importers import SourceError, import_source, read_source
from task_bank.schema import KINDS, InvalidTask, Task, parse_task
from task_bank.store import Attempt, Bank, BankError, Rejection
from task_bank.training import ModelRecord, Proposal

__all__ = [
    "KINDS",
    "Attempt",
    "Bank",
    "BankError",
    "Gate",
    "GateConfig",
    "GateReport",
    "InvalidTask",
    "ModelRecord",
    "Proposal",
    "Rejection",
    "SourceError",
    "Task",
    "import_source",
    "parse_task",
    "read_source",
]
