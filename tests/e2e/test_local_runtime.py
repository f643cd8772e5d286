"""`make run` as a user meets it: the local runtime over real HTTP, and the report in a real
browser."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import STOP_GRACE_S
from tests.support.examples import EXAMPLE_DIR, ROOT

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_it_starts_with_the_example_seeded_and_prints_its_urls(server):
    log = server.output.read_text()
    assert f"{server.url}/docs" in log
    reports = re.findall(rf"example report .*{re.escape(server.url)}/estimates/[^ \n]+/report", log)
    assert len(reports) == 3  # trn2, trn3, p5
    assert re.search(rf"demo report \(c7i\.16xlarge\): {re.escape(server.url)}/estimates/", log)
    assert "saved Price List file bundled with trncost" in log
    assert re.search(r"embedded AWS: +http://127\.0\.0\.1:\d+ \(region us-east-1\)", log)
    assert "trncost-ingest-dlq, trncost-refresh-dlq" in log
    port = server.url.rsplit(":", 1)[1]
    assert f"local-{port}.json" in log  # its own state file
    status, body = server.call("GET", "/health")
    assert status == 200 and body["status"] == "ok"
    status, page = server.call("GET", "/workloads")
    assert sorted(w["workload_id"] for w in page["items"]) == ["llama31-8b-cpt", "tiny-demo"]


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


@pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium not installed")
def test_swagger_ui_at_docs_shows_the_checked_in_document(server, tmp_path):
    from trncost.api.app import SPEC_FILE

    # Given the checked-in document, with a summary for every operation
    document = json.loads(SPEC_FILE.read_text(encoding="utf-8"))
    summaries = [op["summary"] for ops in document["paths"].values() for op in ops.values()]
    # When a browser opens /docs
    dom = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--virtual-time-budget=15000",
            "--dump-dom",
            f"{server.url}/docs",
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    # Then Swagger UI has rendered that document: its operations by their summaries, and its
    # one error schema (never Powertools' HTTPValidationError)
    text = html.unescape(dom)
    assert "swagger-ui" in dom and "opblock-summary-description" in dom
    assert [s for s in summaries if s not in text] == []
    assert "ErrorBody" in text and "HTTPValidationError" not in text


def _seeded(server, kind: str) -> dict[str, str]:
    """instance type → estimate id of the example's or the demo's reports, from the log."""
    log = server.output.read_text()
    found = re.findall(rf"{kind} report \(([^)]+)\): [^ \n]+/estimates/([^/ \n]+)/report", log)
    return dict(found)


def _versions(server, estimate_id: str) -> list[dict]:
    status, body = server.call("GET", f"/estimates/{estimate_id}/versions")
    assert status == 200, body
    return body["versions"]


def _cli(server, *argv: str, env: dict | None = None, timeout: float = 180):
    import sys

    return subprocess.run(
        [sys.executable, "-m", "trncost_client.cli", *argv],
        cwd=ROOT,
        env={**server.env, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_a_real_training_loop_under_the_agent_refreshes_the_demo_not_the_example(server):
    """`trncost trial run --local -- python examples/train_tiny.py`: numpy training under
    the trial agent → CloudWatch + event in the embedded AWS → ingest → trial record →
    refresh → the demo workload's estimate gets a new version saying what moved; the example
    workload's estimates do not move (the demo does not pollute the example)."""
    import sys

    example_before = {i: len(_versions(server, e)) for i, e in _seeded(server, "example").items()}
    run = _cli(
        server,
        *("trial", "run", "--local", "--url", server.url, "--trial-id", "e2e-tiny"),
        *("--wait", "60", "--", sys.executable, "examples/train_tiny.py", "--steps", "40"),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"runtime {server.url} (embedded AWS http://127.0.0.1:" in run.stdout
    assert "trial e2e-tiny of workload tiny-demo" in run.stdout
    assert "recorded as 1× c7i.16xlarge" in run.stdout
    assert f"trial e2e-tiny recorded at {server.url}/trials/e2e-tiny" in run.stdout
    status, body = server.call("GET", "/trials/e2e-tiny")
    trial = body["trial"]
    assert status == 200 and trial["workload_id"] == "tiny-demo"
    assert trial["candidate"]["instance_type"] == "c7i.16xlarge"
    assert trial["work"]["done"] == 40 * 64 * 128
    assert trial["checkpointing"]["restore_verified"] is True
    assert trial["quality"]["metric"] == "eval_loss"
    (demo,) = _seeded(server, "demo").values()
    made = [v for v in _versions(server, demo) if "e2e-tiny" in v["reason"]]
    assert made, _versions(server, demo)
    assert {c["figure"] for c in made[0]["changes"]} >= {"total_usd"}
    assert "new version" in run.stdout
    # the example's figures stay where they were: no version from the demo's run
    assert {i: len(_versions(server, e)) for i, e in _seeded(server, "example").items()} == (
        example_before
    )


def test_a_trial_plan_runs_its_phases_as_local_processes_and_refreshes_the_demo(server):
    """POST /workloads/tiny-demo/trial-plans under `make run`: the real state machine on the
    embedded Step Functions, each phase's run the tiny training as a local process under the
    agent, ingested like a job's; GET /trial-plans/{id} shows each phase and its trials."""
    import time

    plan = json.loads((ROOT / "examples" / "tiny-demo" / "trial-plan.json").read_text())
    (demo,) = _seeded(server, "demo").values()
    example_before = {i: len(_versions(server, e)) for i, e in _seeded(server, "example").items()}
    started = time.monotonic()
    status, created = server.call("POST", "/workloads/tiny-demo/trial-plans", plan)
    assert status == 201, created
    plan_id = created["plan_id"]
    assert created["plan"]["launcher"] == "local"  # the default under make run
    assert created["plan"]["entry_command"] == ["python", "examples/train_tiny.py"]
    assert created["execution_arn"].endswith(f":trncost-local-trial-plans:{plan_id}")
    seen = set()
    while True:
        status, view = server.call("GET", f"/trial-plans/{plan_id}")
        assert status == 200, view
        seen |= {(p["phase"], p["status"]) for p in view["phases"]}
        if view["status"] not in ("submitted", "running"):
            break
        assert time.monotonic() - started < 240, view
        time.sleep(1)
    elapsed = time.monotonic() - started
    assert view["status"] == "completed", view
    assert view["execution_status"] == "SUCCEEDED"
    phases = {p["phase"]: p for p in view["phases"]}
    assert phases["fit"]["status"] == phases["target"]["status"] == "passed"
    assert phases["baseline"]["gate"] is not None  # passed, or failed: advisory on a laptop
    assert [p["runs_recorded"] for p in view["phases"]] == [1, 3, 1]
    assert ("fit", "running") in seen or ("baseline", "running") in seen  # it advanced
    trial_ids = [t["trial_id"] for t in view["trials"]]
    assert trial_ids == [
        f"{plan_id}-fit-c0-n1-r1",
        *(f"{plan_id}-baseline-c0-n1-r{r}" for r in (1, 2, 3)),
        f"{plan_id}-target-c0-n1-r1",
    ]
    assert all(t["landed"] and t["job_id"].startswith("local-") for t in view["trials"])
    assert [tid for p in view["phases"] for tid in p["trial_ids"]] == trial_ids
    for trial_id in trial_ids:  # each run was ingested into a trial record of the demo
        status, body = server.call("GET", f"/trials/{trial_id}")
        assert status == 200 and body["trial"]["workload_id"] == "tiny-demo"
    # the demo's estimate refreshed from the plan's trials, each version saying what moved
    made = [v for v in _versions(server, demo) if plan_id in v["reason"]]
    assert made and all(v["changes"] for v in made), _versions(server, demo)
    print(
        f"\ntrial plan {plan_id}: {len(trial_ids)} runs in {elapsed:.0f} s; demo estimate "
        f"versions {[v['version'] for v in made]}"
    )
    assert {i: len(_versions(server, e)) for i, e in _seeded(server, "example").items()} == (
        example_before
    )


def test_dlq_and_report_against_the_local_runtime_need_no_flags(server, tmp_path):
    listing = _cli(server, "dlq", "list", env={"TRNCOST_URL": server.url})
    assert listing.returncode == 0, listing.stdout + listing.stderr
    assert f"the local runtime {server.url}: embedded AWS http://127.0.0.1:" in listing.stdout
    assert "region us-east-1" in listing.stdout
    assert "trncost-ingest-dlq" in listing.stdout and "trncost-refresh-dlq" in listing.stdout
    (demo,) = _seeded(server, "demo").values()
    report = _cli(server, "report", demo, env={"TRNCOST_URL": server.url, "TMPDIR": str(tmp_path)})
    assert report.returncode == 0, report.stdout + report.stderr
    (written,) = tmp_path.glob(f"trncost-report-{demo}-*.html")
    assert str(written) in report.stdout and "c7i.16xlarge" in written.read_text()


def test_with_two_runtimes_a_trial_goes_to_the_one_named(server, tmp_path):
    """A second `trncost serve` on the same machine (same state directory): a trial sent to
    it lands there and not in the first, and neither runtime's state file is touched by the
    other."""
    import signal
    import sys

    from tests.e2e.conftest import free_port

    port = free_port()
    log_path = tmp_path / "second.log"
    with log_path.open("w") as log:
        second = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "trncost_client.cli",
                "serve",
                "--port",
                str(port),
                "--no-example",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env=server.env,
        )
    other = f"http://127.0.0.1:{port}"
    state_dir = Path(server.env["TRNCOST_STATE_DIR"])
    first_state = state_dir / f"local-{server.url.rsplit(':', 1)[1]}.json"
    try:
        import time

        deadline = time.monotonic() + 60
        while "Ctrl-C stops it" not in log_path.read_text():
            assert second.poll() is None and time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.2)
        first_before = first_state.read_text()
        run = _cli(
            server,
            *("trial", "run", "--local", "--url", other, "--trial-id", "e2e-second"),
            *("--wait", "60", "--", sys.executable, "examples/train_tiny.py", "--steps", "20"),
        )
        assert run.returncode == 0, run.stdout + run.stderr
        assert f"runtime {other} (" in run.stdout
        assert server.call("GET", "/trials/e2e-second")[0] == 404  # not in the first
        assert first_state.read_text() == first_before
    finally:
        second.send_signal(signal.SIGINT)
        try:
            second.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            second.kill()
            raise
    assert not (state_dir / f"local-{port}.json").exists()  # it removed its own file only
    assert first_state.exists()
