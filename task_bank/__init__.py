"""The task bank: verified tasks, solver attempts, rounds and models in one SQLite file.

The bank stores; it does not judge. What gets in is admission's (`selfplay.admission`).

```python
from selfplay.admission import Admission, import_source
from selfplay.verifier import Verifier
from task_bank import Bank

with Verifier(workers=2) as v, Bank("selfplay.db") as bank:
    report = import_source("seeds", Admission(bank, v))  # verify, dedup, decontaminate, store
    stats = bank.solve_stats()                            # per-task counters for the curriculum
```
"""

from task_bank.store import Attempt, Bank, BankError, Rejection
from task_bank.training import ModelRecord, Proposal

# Only the records the bank stores. Parsing untrusted rows and reading sources are
# admission's (`selfplay.admission.schema`, `selfplay.admission.importers`): the bank sits
# below admission and never imports it.
__all__ = ["Attempt", "Bank", "BankError", "ModelRecord", "Proposal", "Rejection"]
