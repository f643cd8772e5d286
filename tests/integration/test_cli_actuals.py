"""`trncost actuals` against the real API handler over real HTTP, on moto: export files read on
this machine (a delivery in parts, Parquet, gzip) and sent as JSON, the same answer as the file
itself; the estimate against them, the scorecard, a budget; errors as one line, exit 2."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from datetime import date

import pytest

from tests.support import actuals_kit as kit
from tests.support.handlers import FakeContext, lambda_env, load_handler
from tests.support.http import serve_http
from trncost.model.catalog import Catalog
from trncost.settings import ACCOUNT_ID_ENV, Settings
from trncost.wiring import Wiring
from trncost_client.cli import main
from trncost_client.local.gateway import WsgiGateway
from trncost_client.local.runtime import default_catalog

START = date(2026, 12, 3)


@pytest.fixture
def stage(table, monkeypatch) -> Iterator[tuple[str, str, str]]:
    """The example's trn2 estimate behind HTTP: (url, workload id, estimate id)."""
    services = Wiring(Settings(table_name=table, catalog=Catalog.model_validate(default_catalog())))
    workload_id, estimate_id = kit.seed_stage(services)
    lambda_env(
        monkeypatch, table, POWERTOOLS_METRICS_DISABLED="true", **{ACCOUNT_ID_ENV: "123456789012"}
    )
    monkeypatch.delenv("TRNCOST_URL", raising=False)
    module = load_handler("api")
    for url in serve_http(WsgiGateway(module.handler, FakeContext())):
        yield url, workload_id, estimate_id


def test_import_reads_a_delivery_in_parts_and_sends_what_it_holds(stage, tmp_path, capsys):
    url, workload_id, estimate_id = stage
    # Given one delivery in two gzip parts, in a folder as AWS writes it
    lines = kit.run_bill(estimate_id, workload_id, START).splitlines(keepends=True)
    folder = tmp_path / "BILLING_PERIOD=2026-12"
    folder.mkdir()
    (folder / "export-00001.csv.gz").write_bytes(gzip.compress("".join(lines[:12]).encode()))
    (folder / "export-00002.csv.gz").write_bytes(
        gzip.compress("".join([lines[0], *lines[12:]]).encode())
    )
    # When it is imported, then again
    assert main(["actuals", "import", str(folder), "--url", url, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["actuals", "import", str(folder), "--url", url]) == 0
    printed = capsys.readouterr().out
    # Then the rows of both parts, one period created; again: unchanged
    assert (first["rows_read"], first["matched"], first["unmatched"]) == (25, 24, 1)
    assert [p["outcome"] for p in first["periods"]] == ["created"]
    assert "2026-12 focus_1_2:111122223333: unchanged" in printed
    assert f"{url}/estimates/{estimate_id}/actuals" in printed


def test_show_and_scorecard_print_the_figures(stage, tmp_path, capsys):
    url, workload_id, estimate_id = stage
    bill = tmp_path / "bill.csv"
    bill.write_text(kit.run_bill(estimate_id, workload_id, START))
    assert main(["actuals", "import", str(bill), "--url", url]) == 0
    capsys.readouterr()
    assert main(["actuals", "show", estimate_id, "--url", url]) == 0
    shown = capsys.readouterr().out
    assert f"billed {'$'}{kit.billed_total():,.2f}" in shown and "inside" in shown
    assert "gap: hours" in shown
    assert main(["actuals", "scorecard", "--workload", workload_id, "--url", url, "--json"]) == 0
    card = json.loads(capsys.readouterr().out)
    assert (card["estimates_with_actuals"], card["inside_p10_p90"]) == (1, 1)


def test_dry_run_sends_nothing(stage, tmp_path, capsys):
    url, workload_id, estimate_id = stage
    bill = tmp_path / "bill.csv"
    bill.write_text(kit.run_bill(estimate_id, workload_id, START))
    assert main(["actuals", "import", str(bill), "--dry-run", "--url", url, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["tagged_rows"] == 24 and summary["estimate_ids"] == [estimate_id]
    assert main(["actuals", "show", estimate_id, "--url", url]) == 2  # nothing imported: 404
    assert "no actuals yet" in capsys.readouterr().err


def test_budget_prints_the_limit_and_alerts(stage, capsys):
    url, _, estimate_id = stage
    args = ["actuals", "budget", estimate_id, "--email", "ml-owner@example.com", "--url", url]
    assert main([*args, "--start", "2026-12-01"]) == 0
    out = capsys.readouterr().out
    assert f"trncost-{estimate_id}" in out and "created" in out and "P50" in out
    assert main([*args[:3], "--url", url]) == 2
    assert "give at least one --email or --sns" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"a,b\n1,2\n", "neither a FOCUS 1.2 export"),
        (None, "No such file"),
    ],
)
def test_a_file_it_cannot_read_is_one_line_and_exit_2(stage, tmp_path, capsys, content, message):
    url, _, _ = stage
    path = tmp_path / "x.csv"
    if content is not None:
        path.write_bytes(content)
    assert main(["actuals", "import", str(path), "--url", url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trncost: error:") and message.lower() in err.lower()
    assert "Traceback" not in err
