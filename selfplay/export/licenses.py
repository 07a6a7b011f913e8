"""The licenses of an export: which source's tasks are under which license, and how the card
says it in the terms the Hub accepts.

The Hub reads `license:` as one of its license identifiers (HUB_LICENSES, the table of its
"Licenses" documentation page). Tasks from sources under different licenses take
`license: other` with a `license_name` slug and `license_link: LICENSE`, a file in the export
that lists each source's license, as the Hub asks for a license outside its list.
`card_problems` checks a card's YAML offline (the Hub's own check needs the network).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

# The identifiers the Hub accepts in a card's `license:` field.
HUB_LICENSES = frozenset(
    "apache-2.0 mit openrail bigscience-openrail-m creativeml-openrail-m bigscience-bloom-rail-1.0 "
    "bigcode-openrail-m afl-3.0 artistic-2.0 bsl-1.0 bsd bsd-2-clause bsd-3-clause "
    "bsd-3-clause-clear c-uda cc cc0-1.0 cc-by-2.0 cc-by-2.5 cc-by-3.0 cc-by-4.0 cc-by-sa-3.0 "
    "cc-by-sa-4.0 cc-by-nc-2.0 cc-by-nc-3.0 cc-by-nc-4.0 cc-by-nd-4.0 cc-by-nc-nd-3.0 "
    "cc-by-nc-nd-4.0 cc-by-nc-sa-2.0 cc-by-nc-sa-3.0 cc-by-nc-sa-4.0 cdla-sharing-1.0 "
    "cdla-permissive-1.0 cdla-permissive-2.0 wtfpl ecl-2.0 epl-1.0 epl-2.0 etalab-2.0 eupl-1.1 "
    "agpl-3.0 gfdl gpl gpl-2.0 gpl-3.0 lgpl lgpl-2.1 lgpl-3.0 isc lppl-1.3c ms-pl mpl-2.0 odc-by "
    "odbl openrail++ osl-3.0 postgresql ofl-1.1 ncsa unlicense zlib pddl lgpl-lr "
    "deepfloyd-if-license llama2 gemma unknown other".split()
)
# The licenses of the sources selfplay knows; other sources take the export's --license.
SOURCE_LICENSES = {"humaneval": "mit", "seeds": "apache-2.0"}
LICENSE_FILE = "LICENSE"
_SLUG = re.compile(r"^[a-z0-9][a-z0-9.+-]*$")


def unknown_license(license_id: str) -> str | None:
    """None for an identifier the Hub accepts, else one sentence saying what to use."""
    if license_id in HUB_LICENSES:
        return None
    return (
        f"'{license_id}' is not a license identifier the Hugging Face Hub accepts "
        "(lower case, for example apache-2.0, mit, cc-by-4.0)"
    )


def licenses(by_source: Counter, options: dict[str, Any]) -> dict[str, str]:
    """source -> license of its tasks: the known ones, overridden by --source-license, else
    the export's --license."""
    known = SOURCE_LICENSES | dict(options.get("source_licenses") or {})
    default = options.get("license", "apache-2.0")
    return {source: known.get(source, default) for source in sorted(by_source)}


def is_mixed(per_source: dict[str, str]) -> bool:
    return len(set(per_source.values())) > 1


def front_matter(per_source: dict[str, str]) -> dict[str, Any]:
    """The card's license fields."""
    if not is_mixed(per_source):
        return {"license": next(iter(per_source.values()))}
    name = "mixed-" + "-".join(sorted(set(per_source.values())))
    return {"license": "other", "license_name": name, "license_link": LICENSE_FILE}


def license_file(per_source: dict[str, str], by_source: Counter) -> str | None:
    """The text of the export's LICENSE file where the tasks' licenses differ, else None."""
    if not is_mixed(per_source):
        return None
    lines = [
        "The tasks of this dataset come from sources under different licenses; each task is "
        "under the license of its source:",
        "",
        *(f"- {source} ({_tasks(by_source[source])}): {lic}" for source, lic in per_source.items()),
        "",
        "The texts of these licenses: https://spdx.org/licenses/ (by identifier).",
    ]
    return "\n".join(lines) + "\n"


def _tasks(n: int) -> str:
    return f"{n} task" + ("" if n == 1 else "s")


def section(per_source: dict[str, str], by_source: Counter, table: Any) -> str:
    rows = [(source, by_source[source], per_source[source]) for source in per_source]
    if not is_mixed(per_source):
        lead = f"Every task is under {next(iter(per_source.values()))}."
    else:
        lead = (
            "The tasks come from sources under different licenses (`license: other`; the "
            f"`{LICENSE_FILE}` file lists them):"
        )
    return lead + "\n\n" + table(("source", "tasks", "license"), rows)


def card_problems(text: str) -> list[str]:
    """What is wrong with a card's YAML for the Hub, as sentences; empty when nothing is.

    The YAML is read by huggingface_hub's own card parser (`DatasetCard`); the license rules
    are the Hub's: a known identifier, and `other` with a slug name and a link.
    """
    from huggingface_hub import DatasetCard

    try:
        data = DatasetCard(text).data.to_dict()
    except Exception as e:  # the parser's errors are of several types
        return [f"the card's YAML does not parse ({e})"]
    problems = []
    license_id = data.get("license")
    if not isinstance(license_id, str) or unknown_license(license_id):
        problems.append(f"license {license_id!r} is not a Hub license identifier")
    if license_id == "other":
        name = data.get("license_name")
        if not isinstance(name, str) or not _SLUG.match(name):
            problems.append(f"license_name {name!r} is not a lower-case slug")
        if not data.get("license_link"):
            problems.append("license: other needs a license_link")
    for key in ("task_categories", "size_categories", "configs"):
        if not isinstance(data.get(key), list) or not data[key]:
            problems.append(f"{key} must be a non-empty list")
    return problems
