"""Admission: the one chain a candidate task passes before it enters the bank.

Sources (an import read by `selfplay.admission.importers`, the proposer's parsed proposals)
make `Candidate`s; `Admission.admit` runs every step in one place (static steps, two
runs of each program, the kind's check, exact and near dedup, decontamination) and
writes the admitted tasks and every rejection in one transaction. See `chain` for the
order of the steps.
"""

from selfplay.admission.candidate import AdmissionReport, Candidate, Reason
from selfplay.admission.chain import Admission, AdmissionConfig
from selfplay.admission.sources import admit_batches, admit_candidates, import_source

__all__ = [
    "Admission",
    "AdmissionConfig",
    "AdmissionReport",
    "Candidate",
    "Reason",
    "admit_batches",
    "admit_candidates",
    "import_source",
]
