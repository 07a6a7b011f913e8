"""Sources feed the chain: an import is read whole, then admitted in batches.

Each batch is one transaction, so an interrupted import keeps the batches already
written, and running it again adds only what is missing.
"""

from __future__ import annotations

from collections.abc import Callable

from selfplay.admission.candidate import AdmissionReport
from selfplay.admission.chain import Admission
from task_bank.importers import Candidates, read_source


def admit_candidates(
    candidates: Candidates,
    admission: Admission,
    *,
    batch_size: int = 64,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> AdmissionReport:
    """Record the read-time rejections, then pass the tasks through admission in batches."""
    tasks = candidates.tasks[:limit] if limit is not None else candidates.tasks
    report = AdmissionReport(seen=len(candidates.rejections))
    for r in candidates.rejections:
        report.rejected[r.reason] += 1
    if candidates.rejections:
        admission.bank.add_rejections(candidates.rejections)
    for start in range(0, len(tasks), batch_size):
        report.merge(admission.admit(tasks[start : start + batch_size]))
        if progress:
            progress(min(start + batch_size, len(tasks)), len(tasks))
    return report


def import_source(
    source: str,
    admission: Admission,
    *,
    source_name: str | None = None,
    shape: str | None = None,
    batch_size: int = 64,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> AdmissionReport:
    """Read, check and admit a whole source; returns the counts."""
    candidates = read_source(source, source_name=source_name, shape=shape)
    return admit_candidates(
        candidates, admission, batch_size=batch_size, limit=limit, progress=progress
    )
