"""Sources feed the chain: an import is read whole, then admitted in batches.

Each batch is one transaction, so an interrupted import keeps the batches already
written, and running it again adds only what is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from selfplay.admission.candidate import AdmissionReport, Candidate
from selfplay.admission.chain import Admission
from selfplay.admission.importers import Candidates, read_source
from selfplay.task import Task


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
    report.merge(admit_batches(tasks, admission, batch_size=batch_size, progress=progress))
    return report


def admit_batches(
    items: Sequence[Candidate | Task],
    admission: Admission,
    *,
    batch_size: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> AdmissionReport:
    """Admit `items` in batches of one transaction each, so an interrupted run keeps the
    batches already written."""
    report = AdmissionReport()
    for start in range(0, len(items), batch_size):
        report.merge(admission.admit(items[start : start + batch_size]))
        if progress:
            progress(min(start + batch_size, len(items)), len(items))
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
