"""`make run` as a user meets it: the local runtime over real HTTP, and the report in a real
browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from tests.support.examples import EXAMPLE_DIR, ROOT

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_it_starts_with_the_example_seeded_and_prints_its_urls(server):
    log = server.output.read_text()
    assert f"{server.url}/docs" in log
    reports = re.findall(rf"{re.escape(server.url)}/estimates/[^ \n]+/report", log)
    assert len(reports) == 3  # trn2, trn3, p5
    assert "saved Price List file bundled with trncost" in log
    status, body = server.call("GET", "/health")
    assert status == 200 and body["status"] == "ok"
    status, page = server.call("GET", "/workloads")
    assert [w["workload_id"] for w in page["items"]] == ["llama31-8b-cpt"]


def test_workload_to_report_over_http(server):
    workload = json.loads((EXAMPLE_DIR / "workload.json").read_text())
    workload["workload_id"] = "e2e-llama"
    assert server.call("POST", "/workloads", workload)[0] == 201
    trials = [
        t
        for t in json.loads((EXAMPLE_DIR / "trials.json").read_text())
        if t["candidate"]["instance_type"] == "trn2.48xlarge"
    ]
    for t in trials:
        t["workload_id"] = "e2e-llama"
        t["trial_id"] = "e2e-" + t["trial_id"]  # trial ids are unique across workloads
        status, _ = server.call("POST", "/workloads/e2e-llama/trials", t)
        assert status == 201
    status, page = server.call("GET", "/workloads/e2e-llama/trials")
    assert status == 200 and len(page["items"]) == len(trials)

    request = {
        "candidate": {"instance_type": "trn2.48xlarge", "instance_count": 4, "region": "us-east-2"},
        "assumptions": {
            "idle_fraction": 0.05,
            "ebs_gb_per_instance": 500,
            "engineering_hours": 120,
            "engineering_hourly_usd": "110",
        },
    }
    status, created = server.call("POST", "/workloads/e2e-llama/estimates", request)
    assert status == 201, created
    est = created["estimate"]
    assert est["status"] == "complete" and float(est["total_usd"]) > 0
    assert any(w["code"] == "example_prices" for w in est["warnings"])
    eid = created["estimate_id"]
    status, versions = server.call("GET", f"/estimates/{eid}/versions")
    assert status == 200 and [v["version"] for v in versions["versions"]] == [1]
    status, html = server.call("GET", f"/estimates/{eid}/report")
    assert status == 200 and "trn2.48xlarge" in html and "Input" in html

    # a second trial lands through the API: refresh is event-driven only for ingested
    # trials, so the estimate keeps version 1 until recomputed; the old one stays readable
    status, again = server.call("GET", f"/estimates/{eid}", None)
    assert status == 200 and again["version"] == 1


def test_bad_requests_over_http_are_4xx(server):
    assert server.call("POST", "/workloads", b"{oops")[0] == 400
    assert server.call("POST", "/workloads", b"\xff\xfe", "application/json")[0] == 400
    assert server.call("POST", "/workloads", b"{}", "text/plain")[0] == 415
    assert server.call("POST", "/workloads", b"{}")[0] == 422
    assert server.call("GET", "/estimates/nope")[0] == 404
    assert server.call("POST", "/workloads", b"x" * (3 * 1024 * 1024))[0] == 413


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian chromium not installed (make test "
    "installs it when it can: apt-get install chromium)",
)
def test_the_report_renders_in_headless_chromium(server, tmp_path):
    log = server.output.read_text()
    trn3 = re.search(
        rf"trn3\.48xlarge\): ({re.escape(server.url)}/estimates/[^ \n]+/report)", log
    ).group(1)
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    shot = tmp_path / "report.png"
    subprocess.run(
        [CHROMIUM, *flags, f"--screenshot={shot}", "--window-size=1280,2400", trn3],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert shot.exists() and shot.stat().st_size > 20_000
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    dom = subprocess.run(
        [CHROMIUM, *flags, "--dump-dom", trn3],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    for text in (
        "INCOMPLETE",
        "P[AmazonEC2/us-east-2/trn3.48xlarge/on_demand]",
        "no Price List product for trn3.48xlarge",
        "Input table",
        "instances",
    ):
        assert text in dom, text


def test_a_real_training_loop_under_the_agent_updates_the_estimates(server):
    """`trncost trial run --local -- python examples/train_tiny.py`: numpy training under
    the trial agent → CloudWatch + event in the embedded AWS → ingest → trial record →
    refresh → the example estimates get a new version by themselves."""
    import sys

    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "trncost.cli",
            "trial",
            "run",
            "--local",
            "--trial-id",
            "e2e-tiny",
            "--wait",
            "60",
            "--",
            sys.executable,
            "examples/train_tiny.py",
            "--steps",
            "40",
        ],
        cwd=ROOT,
        env=server.env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "trial e2e-tiny recorded" in run.stdout
    status, body = server.call("GET", "/trials/e2e-tiny")
    trial = body["trial"]
    assert status == 200 and trial["work"]["done"] == 40 * 64 * 128
    assert trial["checkpointing"]["restore_verified"] is True
    assert trial["quality"]["metric"] == "eval_loss"
    log = server.output.read_text()
    trn3 = re.search(r"trn3\.48xlarge\): [^ \n]+/estimates/([^/ \n]+)/report", log).group(1)
    status, versions = server.call("GET", f"/estimates/{trn3}/versions")
    assert [v["version"] for v in versions["versions"]][-1] >= 2
    assert any("e2e-tiny" in v["reason"] for v in versions["versions"])
