"""`trncost init DIR`: a workload's request files that answer as written, and a README that
documents every field of each file (generated from the models the loader validates with)."""

from __future__ import annotations

import json
import re

from tests.support.examples import example_estimates  # noqa: F401  (loads the engine once)
from trncost_client.cli import main
from trncost_client.requestfile import load_request_file
from trncost_client.scaffold import FILES


def test_init_writes_files_that_answer_and_a_reference_of_every_field(tmp_path, capsys):
    target = tmp_path / "my-team"
    # When a team asks for its files
    assert main(["init", str(target)]) == 0
    assert sorted(p.name for p in target.iterdir()) == sorted(FILES)
    # Then they are plain JSON that loads and estimates as written
    request = load_request_file(target / "estimate.json")
    assert request.workload.workload_id == "my-workload"
    assert all(t.workload_id == "my-workload" for t in request.trials)
    capsys.readouterr()
    assert main(["estimate", str(target / "estimate.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)
    # And every field of every file is in the README, each with what it means
    readme = (target / "README.md").read_text()
    rows = [
        [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        for line in readme.splitlines()
        if line.startswith("| `")
    ]
    rows = [(path.strip("`"), kind, default, doc) for path, kind, default, doc in rows]
    assert len(rows) > 200
    undocumented = [path for path, _, _, doc in rows if not doc.strip()]
    assert undocumented == []
    for field in ("target.amount", "wall.steady_s", "quality_gate.direction", "supersedes",
                  "idle_fraction.note", "price_overrides[].usd"):  # fmt: skip
        assert any(path.endswith(field) for path, *_ in rows), field


def test_init_never_overwrites_unless_asked(tmp_path, capsys):
    assert main(["init", str(tmp_path)]) == 0
    (tmp_path / "workload.json").write_text("{}")
    assert main(["init", str(tmp_path)]) == 2
    assert "already there" in capsys.readouterr().err
    assert (tmp_path / "workload.json").read_text() == "{}"
    assert main(["init", str(tmp_path), "--force"]) == 0
    assert json.loads((tmp_path / "workload.json").read_text())["workload_id"] == "my-workload"
