"""Bad input is refused with an error that names the field; missing evidence is named, never
guessed around."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from pydantic import ValidationError

from tests.support.factories import candidate, inputs, instance_quote, snapshot, trial, workload
from trncost.errors import DomainError, MissingEvidence, RequestFileError
from trncost.estimate import estimate
from trncost.model import (
    Assumptions,
    PriceKey,
    PriceQuote,
    PriceTier,
    TrialRun,
    Workload,
)
from trncost_client.requestfile import load_request_file


def locs(exc: ValidationError) -> set[str]:
    return {".".join(str(p) for p in e["loc"]) for e in exc.errors()}


def test_a_workload_without_a_target_names_the_field():
    data = workload().model_dump(mode="json")
    del data["target"]
    with pytest.raises(ValidationError) as exc:
        Workload.model_validate(data)
    assert locs(exc.value) == {"target"}


@pytest.mark.parametrize("amount", [-1, 0, float("nan"), float("inf"), "-inf"])
def test_negative_zero_or_non_finite_target_amounts_are_refused(amount):
    with pytest.raises(ValidationError) as exc:
        workload(target={"unit": "tokens", "amount": amount})
    assert locs(exc.value) == {"target.amount"}


def test_an_unknown_unit_is_refused():
    with pytest.raises(ValidationError) as exc:
        workload(target={"unit": "bytes", "amount": 1e9})
    assert locs(exc.value) == {"target.unit"}


def test_an_unknown_phase_is_refused():
    with pytest.raises(ValidationError) as exc:
        trial(phase="warmup")
    assert locs(exc.value) == {"phase"}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("steady_s", -5.0),
        ("steady_s", float("nan")),
        ("compile_s", float("inf")),
        ("checkpoint_save_s", -1.0),
    ],
)
def test_negative_or_non_finite_times_are_refused(field, value):
    wall = {"steady_s": 3600.0, field: value}
    with pytest.raises(ValidationError) as exc:
        trial(wall=wall)
    assert locs(exc.value) == {f"wall.{field}"}


def test_quality_meeting_work_cannot_exceed_work_done():
    with pytest.raises(ValidationError) as exc:
        trial(work=100, quality_work=200)
    assert "quality_meeting cannot exceed" in str(exc.value)


def test_a_time_outside_the_timing_scope_is_a_contradiction():
    with pytest.raises(ValidationError) as exc:
        trial(
            wall={"steady_s": 3600, "compile_s": 600},
            scope={"compile": False, "data_loading": True, "checkpoints": True, "evaluation": True},
        )
    assert "timing_scope.compile is false" in str(exc.value)


def test_unknown_fields_are_refused_rather_than_ignored():
    data = trial().model_dump(mode="json")
    data["steady_throughput"] = 5
    with pytest.raises(ValidationError) as exc:
        TrialRun.model_validate(data)
    assert locs(exc.value) == {"steady_throughput"}


def test_money_rejects_nan_and_negative_prices():
    key = PriceKey.for_instance("trn2.48xlarge", "us-east-1")
    with pytest.raises(ValidationError) as exc:
        PriceTier(usd=Decimal("NaN"), rate_code="r")
    assert locs(exc.value) == {"usd"}
    with pytest.raises(ValidationError):
        PriceTier(usd=Decimal("-1"), rate_code="r")
    with pytest.raises(ValidationError, match="pending quote carries no price"):
        PriceQuote(
            key=key,
            status="pending",
            pending_reason="x",
            snapshot_id="s",
            tiers=[PriceTier(usd=Decimal(1), rate_code="r")],
        )
    with pytest.raises(ValidationError, match="pending_reason"):
        PriceQuote(key=key, status="pending", snapshot_id="s")


def test_tiers_must_be_contiguous():
    key = PriceKey.for_instance("trn2.48xlarge", "us-east-1")
    with pytest.raises(ValidationError, match=r"tiers\[1\].begin must be 100"):
        PriceQuote(
            key=key,
            status="official",
            unit="GB",
            sku="S",
            snapshot_id="s",
            tiers=[
                PriceTier(begin=Decimal(0), end=Decimal(100), usd=Decimal(1), rate_code="a"),
                PriceTier(begin=Decimal(200), usd=Decimal(1), rate_code="b"),
            ],
        )


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"idle_fraction": 1.0}, "idle_fraction"),
        ({"idle_fraction": -0.1}, "idle_fraction.value"),
        ({"restart_s": {"value": float("nan")}}, "restart_s.value"),
        ({"engineering_hours": 10}, None),
    ],
)
def test_assumptions_are_validated(data, field):
    with pytest.raises(ValidationError) as exc:
        Assumptions.model_validate(data)
    if field:
        assert field in locs(exc.value)
    else:
        assert "engineering_hours and engineering_hourly_usd go together" in str(exc.value)


def test_a_candidate_with_no_trial_is_missing_evidence_not_a_guess():
    # Given a candidate with no trial whose chip is not on record (nothing to project from)
    inp = inputs(cand=candidate("g5.48xlarge", 4), trials=[trial()], prices=snapshot())
    with pytest.raises(MissingEvidence) as exc:
        estimate(inp)
    # Then it is missing evidence, saying why no projection is possible either
    assert "no trial of g5.48xlarge" in str(exc.value)
    assert "no chip on record for g5.48xlarge" in str(exc.value)
    assert exc.value.missing == ["trial"]


def test_only_failed_or_fit_trials_are_missing_evidence():
    trials = [
        trial("t-fit", phase="fit"),
        trial("t-div", status="diverged", quality_work=0),
        trial("t-fail", status="failed"),
    ]
    with pytest.raises(MissingEvidence) as exc:
        estimate(inputs(trials=trials, prices=snapshot()))
    message = str(exc.value)
    assert "completed baseline or target run with quality-meeting work" in message
    for tid in ("t-fit", "t-div", "t-fail"):
        assert tid in message


def test_work_in_samples_without_tokens_per_sample_is_a_domain_error():
    # the trial is excluded (unconvertible_unit); with no other trial that is missing evidence
    wl = workload(tokens_per_sample=None)
    t = trial(work=1000, **{})
    t = t.model_copy(update={"work": t.work.model_copy(update={"unit": "samples"})})
    with pytest.raises(DomainError, match="unconvertible_unit.*set workload.tokens_per_sample"):
        estimate(inputs(wl=wl, trials=[t], prices=snapshot()))


def test_work_in_samples_is_converted_with_tokens_per_sample():
    t = trial(work=3.6e8)
    t = t.model_copy(
        update={
            "work": t.work.model_copy(
                update={"unit": "samples", "done": 3.6e8 / 4096, "quality_meeting": 3.6e8 / 4096}
            )
        }
    )
    est = estimate(inputs(trials=[t], prices=snapshot(instance_quote("trn2.48xlarge", "36"))))
    assert est.steady_throughput == pytest.approx(1e5)


def test_a_trial_of_another_workload_is_refused():
    t = trial(workload_id="wl-other")
    with pytest.raises(DomainError, match="belongs to workload wl-other"):
        estimate(inputs(trials=[t], prices=snapshot()))


def test_request_file_errors_name_the_file_and_field(tmp_path):
    bad = tmp_path / "estimate.json"
    bad.write_text(json.dumps({"workload": {}, "trials": [], "prices": {}, "candidates": []}))
    with pytest.raises(RequestFileError) as exc:
        load_request_file(bad)
    message = str(exc.value)
    assert str(bad) in message
    assert "workload.target: Field required" in message
    assert "candidates: List should have at least 1 item" in message
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(RequestFileError, match=r"not UTF-8 text \(byte 0, line 1\)"):
        load_request_file(tmp_path / "binary.json")
    with pytest.raises(RequestFileError, match="no such file"):
        load_request_file(tmp_path / "missing.json")
