"""The built-in formats, one module each: an `Exporter` (`selfplay.export.exporter`) that owns
its rows, options, reward file and card recipes, registered here in the order the formats
are listed (`selfplay export --help`, the refusal of an unknown one).

RL formats (verl, trl, openrlhf) hold one row per task with its ground truth and its kind's
prompt (`selfplay.kinds.chat`, what the bank's solve rates were measured under). SFT holds
verified solutions (passing attempts and reference programs) as prompt/completion pairs, DPO
holds pairs of a passing and a failing attempt at the same task. Every file loads back with
`datasets.load_dataset("parquet" | "json", ...)`.
"""

from selfplay.export.exporter import register
from selfplay.export.formats.dpo import DpoExporter
from selfplay.export.formats.openrlhf import OpenRLHFExporter
from selfplay.export.formats.sft import SftExporter
from selfplay.export.formats.trl import TrlExporter
from selfplay.export.formats.verl import VerlExporter

for _exporter in (VerlExporter, TrlExporter, OpenRLHFExporter, SftExporter, DpoExporter):
    register(_exporter)
del _exporter

__all__ = ["DpoExporter", "OpenRLHFExporter", "SftExporter", "TrlExporter", "VerlExporter"]
