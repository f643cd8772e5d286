"""POST /workloads/{id}/trials/import through the real API handler on moto: real published
logs become trial records with the provenance of every figure; a log in no known format is a
422 listing the formats tried; more text than the cap is a 413; the same logs twice record
once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.factories import workload
from tests.support.handlers import FakeContext, api_event, load_handler
from trncost.services.trial_logs import LOG_IMPORT_MAX_BYTES
from trncost.settings import LIVE_PRICES_ENV, TABLE_NAME_ENV

LOGS = Path(__file__).resolve().parents[1] / "events" / "logs"


@pytest.fixture
def api(table, monkeypatch):
    monkeypatch.setenv(TABLE_NAME_ENV, table)
    monkeypatch.setenv(LIVE_PRICES_ENV, "false")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    module = load_handler("api")

    def call(method, path, body=None):
        response = module.handler(api_event(method, path, body), FakeContext())
        return response["statusCode"], json.loads(response["body"])

    wl = workload(workload_id="wl-logs").model_dump(mode="json")
    assert call("POST", "/workloads", wl)[0] == 201
    return call


def body(*names: str, **over):
    files = [{"name": n, "text": (LOGS / n).read_text()} for n in names]
    return {"files": files, "phase": "baseline", "instance_type": "trn2.48xlarge",
            "instance_count": 1, "status": "completed", **over}  # fmt: skip


def test_a_megatron_log_becomes_a_trial_with_line_provenance(api):
    # Given the real Megatron-LM lines of NVIDIA/Megatron-LM#756, When they are imported
    status, got = api("POST", "/workloads/wl-logs/trials/import", body("megatron_mixtral_h100.log"))
    # Then the trial is recorded, its work measured from lines 1-3 of that file
    assert status == 201 and got["recorded"] is True
    (f,) = got["files"]
    assert f["format"] == "megatron" and f["matched_lines"] == 3 and f["confidence"] == 1.0
    trial = got["trial"]
    assert trial["work"] == {
        "unit": "samples",
        "done": 256.0,
        "quality_meeting": 256.0,
        "warmup": None,  # a log does not count the warm-up's work apart
    }
    where = trial["provenance"]["work.done"]["measured_in"][0]
    assert where["source"] == "log" and where["file"] == "megatron_mixtral_h100.log"
    assert where["format"] == "megatron" and where["lines"] == [{"first": 2, "last": 3}]
    assert "work.done" in got["measured"] and "wall.compile_s" in got["not_measured"]
    assert trial["wall"]["compile_s"] is None  # not measured, never 0
    # And the record is there to read
    assert api("GET", f"/trials/{trial['trial_id']}")[0] == 200


def test_the_same_logs_twice_record_once(api):
    first = api("POST", "/workloads/wl-logs/trials/import", body("nxdt_llama3_8b_pretrain.log"))
    again = api("POST", "/workloads/wl-logs/trials/import", body("nxdt_llama3_8b_pretrain.log"))
    assert first[0] == 201 and again[0] == 200 and again[1]["recorded"] is False
    assert again[1]["trial"]["trial_id"] == first[1]["trial"]["trial_id"]


def test_a_log_plus_a_compile_report_make_one_trial(api):
    status, got = api(
        "POST",
        "/workloads/wl-logs/trials/import",
        body("nxdt_llama3_8b_pretrain.log", "neuron_parallel_compile_results_constructed.json"),
    )
    assert status == 201
    trial = got["trial"]
    assert trial["wall"]["compile_s"] == pytest.approx(431.8805)
    files = {w["file"] for w in trial["provenance"]["wall.compile_s"]["measured_in"]}
    assert files == {"neuron_parallel_compile_results_constructed.json"}
    assert trial["provenance"]["work.done"]["measured_in"][0]["format"] == "nemo"


def test_an_unrecognised_log_is_a_422_listing_every_format_tried(api):
    bad = {
        **body("megatron_mixtral_h100.log"),
        "files": [{"name": "x.log", "text": "hello\nworld\n"}],
    }
    status, got = api("POST", "/workloads/wl-logs/trials/import", bad)
    assert status == 422 and got["error"] == "unrecognised_log" and got["fields"] == ["log"]
    for name in ("nemo", "megatron", "hf_trainer", "lightning", "neuron_compile"):
        assert f"{name}:" in got["message"]


def test_more_text_than_the_cap_is_a_413(api):
    huge = "x" * (LOG_IMPORT_MAX_BYTES + 1)
    big = {**body("megatron_mixtral_h100.log"), "files": [{"name": "big.log", "text": huge}]}
    status, got = api("POST", "/workloads/wl-logs/trials/import", big)
    assert status == 413 and got["error"] == "payload_too_large"


def test_a_dry_run_writes_nothing_and_an_unknown_workload_is_a_404(api):
    status, got = api(
        "POST", "/workloads/wl-logs/trials/import", body("megatron_llm_epfl.log", dry_run=True)
    )
    assert status == 200 and got["recorded"] is False
    assert api("GET", f"/trials/{got['trial']['trial_id']}")[0] == 404
    assert api("POST", "/workloads/nope/trials/import", body("megatron_llm_epfl.log"))[0] == 404


def test_an_unknown_format_name_is_a_422_naming_the_field(api):
    status, got = api(
        "POST", "/workloads/wl-logs/trials/import", body("megatron_llm_epfl.log", format="nope")
    )
    assert status == 422 and got["fields"] == ["format"] and "unknown log format" in got["message"]


def test_explain_and_the_facts_a_log_cannot_say(api):
    # Given a NeMo 2 excerpt that evaluates val_loss, the facts it cannot say and `explain`
    nemo2 = LOGS / "corpus" / "nemo" / "bionemo-nemo2-training-epoch-iteration-lines.log"
    text = nemo2.read_text()
    request = {
        "files": [{"name": "bionemo.log", "text": text}],
        "phase": "baseline", "instance_type": "trn2.48xlarge", "instance_count": 2,
        "region": "us-west-2", "precision": "bf16", "neuron_sdk_version": "2.20.0",
        "parallelism": {"tensor": 8, "pipeline": 1, "data": 4},
        "quality_metric": {"log_metric": "val_loss", "gate_metric": "eval_loss"},
        "explain": True, "dry_run": True,
    }  # fmt: skip
    status, got = api("POST", "/workloads/wl-logs/trials/import", request)
    # Then the record carries them, the quality read through the stated mapping
    assert status == 200, got
    candidate = got["trial"]["candidate"]
    assert candidate["parallelism"]["tensor"] == 8 and candidate["precision"] == "bf16"
    assert candidate["region"] == "us-west-2" and candidate["neuron_sdk_version"] == "2.20.0"
    assert got["trial"]["quality"]["metric"] == "eval_loss"
    assert got["trial"]["quality"]["value"] == 4.106
    # And the explanation names each figure's lines and rule
    figures = {f["figure"]: f for f in got["explain"]["figures"]}
    assert figures["steps_done"]["value"] == 125 and figures["steps_done"]["lines"] == [[6, 6]]
    assert "0-based" in figures["steps_done"]["rule"]


def test_a_quality_mapping_to_another_metric_is_a_422_naming_the_field(api):
    mapping = {"log_metric": "val_loss", "gate_metric": "accuracy"}
    request = body("megatron_mixtral_h100.log", quality_metric=mapping)
    status, got = api("POST", "/workloads/wl-logs/trials/import", request)
    assert status == 422 and got["error"] == "domain_error" and got["fields"] == ["quality_metric"]
