"""Chaos: a few hundred mixed rows (floods of each kind, infinite loops, crashes, fork bombs,
hacks, correct rows) graded by two workers while another process creates and destroys
namespaces in a loop. Every correct row passes, every hack fails, and nothing runs outside the
sandbox."""

from __future__ import annotations

import uuid
from pathlib import Path

from chaos_rows import Listener, NamespaceChurn, batch, should_pass

from selfplay.verifier import Verifier


def test_a_busy_machine_changes_no_verdict_and_no_isolation(tmp_path):
    secrets = [tmp_path / "secret.txt", Path.home() / f".selfplay-chaos-{uuid.uuid4().hex}"]
    for path in secrets:
        path.write_text("token")
    outside = tmp_path / f"written-{uuid.uuid4().hex}"
    try:
        with Listener() as listener, NamespaceChurn() as churn:
            rows = batch(secrets, listener.port, outside, seed=0)
            with Verifier(workers=2, timeout_s=10, memory_mb=128) as v:
                verdicts = v.grade(rows)
                facts = v.isolation
    finally:
        secrets[1].unlink()
    assert churn.created > 0
    assert len(rows) >= 250
    wrong = [(x.id, x.status, x.detail[:100]) for x in verdicts if x.passed != should_pass(x.id)]
    assert wrong == []
    assert {x.isolation for x in verdicts} == {"sandbox"}
    assert facts["mode"] == "sandbox" and facts["seccomp"] and facts["pid_namespace"]
    assert listener.accepted == [] and not outside.exists()
