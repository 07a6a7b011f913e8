"""`selfplay curriculum` from the command line: simulate, show, plot and bad input."""

from __future__ import annotations

import json

import pytest
from bank_samples import add_tasks
from selfplay_cli import run_cli
from typer.testing import CliRunner

from curricula import scheduler_names
from curricula.graph_store import load_graph
from pipelines.cli import app
from selfplay.admission.importers import SEEDS_PATH
from selfplay.admission.schema import parse_task
from task_bank.store import Bank

SEEDS = SEEDS_PATH
runner = CliRunner()
SMALL = ["--tasks", "300", "--heldout", "100", "--max-rollouts", "80000", "--lr", "0.03"]
SCHEDULERS = ["uniform", "easy_to_hard", "dapo_filter", "learnability", "plr", "frontier"]


@pytest.mark.slow
def test_simulate_json_reports_every_scheduler_on_every_structure_over_seeds(tmp_path):
    png = tmp_path / "sim.png"
    args = ["--json", "--seeds", "2", "--structures", "lineage,layers-20", *SMALL]
    result = runner.invoke(app, ["curriculum", "simulate", *args, "--plot", str(png)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["config"]["n_tasks"] == 300 and data["config"]["target"] == 0.6
    assert data["seeds"] == 2 and list(data["structures"]) == ["lineage", "layers-20"]
    assert data["structures"]["layers-20"]["structure"]["fan_in"] == 20
    for world in data["structures"].values():
        # Every registered scheduler, built-in ones first (other tests register more).
        assert list(world["schedulers"]) == scheduler_names()
        assert list(world["schedulers"])[: len(SCHEDULERS)] == list(SCHEDULERS)
        uniform = world["schedulers"]["uniform"]
        for s in world["schedulers"].values():
            assert len(s["runs"]) == 2
            assert s["min"] <= s["q25"] <= s["q75"] <= s["max"] <= 80000
            assert 0.0 <= s["useful_share"] <= 1.0
            if s["median"] is not None and uniform["median"] is not None:
                assert s["ratio_to_uniform"] == pytest.approx(s["median"] / uniform["median"])
        assert [(t["scheduler"], t["baseline"]) for t in world["targets"]] == [
            ("learnability", "uniform"),
            ("frontier", "uniform"),
            ("frontier", "learnability"),
        ]
        for t in world["targets"]:
            assert t["met"] == (t["ratio"] is not None and t["ratio"] <= t["max_ratio"])
    met = [t["met"] for w in data["structures"].values() for t in w["targets"]]
    assert data["all_met"] == all(met)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert data["plot"] == str(png)


def test_simulate_is_deterministic_and_prints_a_table():
    args = ["curriculum", "simulate", "--seeds", "1", *SMALL]
    args += ["--structures", "chains,noisy", "--schedulers", "uniform,learnability"]
    first = runner.invoke(app, [*args, "--json"])
    second = runner.invoke(app, [*args, "--json"])
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["structures"] == json.loads(second.stdout)["structures"]
    table = runner.invoke(app, args)
    assert table.exit_code == 0
    assert "chains" in table.stdout and "noisy" in table.stdout
    assert "learnability" in table.stdout and "targets:" in table.stdout


def test_an_unknown_structure_is_one_sentence_and_exit_2():
    result = runner.invoke(app, ["curriculum", "simulate", "--structures", "layers-20,nope"])
    assert result.exit_code == 2
    assert "unknown structure nope" in result.stderr and result.stderr.count("\n") == 1


@pytest.mark.slow
def test_an_unknown_scheduler_is_one_sentence_and_exit_2():
    result = run_cli("curriculum", "simulate", "--schedulers", "uniform,nope", timeout=120)
    assert result.returncode == 2
    assert (
        result.stderr.strip().splitlines() == [result.stderr.strip()]
        and "unknown scheduler nope" in result.stderr
    )
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_show_json_summarises_a_real_bank(bank_path):
    result = runner.invoke(
        app, ["curriculum", "show", "--bank", str(bank_path), "--json", "--limit", "3"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    with Bank(bank_path, create=False) as bank:
        assert data["tasks"] == bank.count()
        assert data["attempted"] == int((bank.solve_stats()["attempts"] > 0).sum()) == 70
    assert len(data["frontier"]) == min(3, data["frontier_size"])
    lbs = [row["expected_variance"] for row in data["frontier"]]
    assert lbs == sorted(lbs, reverse=True)
    assert [r["round_id"] for r in data["rounds"]] == [1, 2]


def test_show_prints_tables_and_does_not_write_unless_asked(bank_path, tmp_path):
    copy = tmp_path / "bank.db"
    copy.write_bytes(bank_path.read_bytes())
    result = runner.invoke(app, ["curriculum", "show", "--bank", str(copy)])
    assert result.exit_code == 0, result.output
    assert "Frontier" in result.stdout and "Skill coverage" in result.stdout
    assert len(load_graph(copy)) == 0
    # Every task shown here was tried: no prior to explain.
    assert "not tried yet" not in result.stdout
    assert runner.invoke(app, ["curriculum", "show", "--bank", str(copy), "--save"]).exit_code == 0
    saved = load_graph(copy).graph
    assert len(saved) > 100 and any(d["relation"] == "lineage" for *_, d in saved.edges(data=True))


def test_an_untried_tasks_rate_is_marked_as_the_prior(tmp_path):
    with Bank(tmp_path / "fresh.db") as bank:
        rows = [json.loads(line) for line in SEEDS.read_text().splitlines()[:4]]
        add_tasks(bank, [parse_task(r, source="seeds") for r in rows])
    result = runner.invoke(app, ["curriculum", "show", "--bank", str(tmp_path / "fresh.db")])
    assert result.exit_code == 0, result.output
    assert "0.50*" in result.stdout
    assert "4 tasks not tried yet: the rate shown is the prior" in " ".join(result.stdout.split())


@pytest.mark.slow
def test_plot_writes_three_pngs_and_graphml(bank_path, tmp_path):
    out = tmp_path / "plots"
    result = runner.invoke(
        app,
        [
            "curriculum",
            "plot",
            "--bank",
            str(bank_path),
            "--out",
            str(out),
            "--graphml",
            str(out / "g.graphml"),
        ],
    )
    assert result.exit_code == 0, result.output
    for name in ("graph.png", "expected_variance.png", "rounds.png"):
        assert (out / name).read_bytes()[:4] == b"\x89PNG"
    assert "<graphml" in (out / "g.graphml").read_text()


def test_show_on_a_missing_bank_is_one_sentence_and_exit_2(tmp_path):
    result = runner.invoke(app, ["curriculum", "show", "--bank", str(tmp_path / "none.db")])
    assert result.exit_code == 2
    assert "there is no bank" in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "none.db").exists()
