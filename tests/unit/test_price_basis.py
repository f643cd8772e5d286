"""A basis on every price, typed overrides, PENDING never a number, the cloud bill apart from
assumed labour (issue 12). Worked examples: the arithmetic is in the comments."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from tests.support.events import event_path
from tests.support.factories import candidate, inputs, instance_quote, trial, workload
from tests.support.scenarios import example_one, example_two
from tests.unit.test_worked_examples import line, tiny
from trncost.api.context import caller_arn
from trncost.errors import InvalidInput
from trncost.estimate import analyse, estimate
from trncost.model import Component, PriceSnapshot
from trncost.model.basis import PriceBasis, capped, weakest
from trncost.model.candidate import Candidate
from trncost.model.catalog import Catalog
from trncost.model.price import PriceOverride
from trncost.report.html import render_report
from trncost.services.snapshots import snapshot_from_saved
from trncost.settings import ACCEPT_UPLOADS_ENV, Settings

SAGEMAKER = event_path("pricelist/get_products_sagemaker_constructed")
TRN3 = "AmazonEC2/us-east-1/trn3.48xlarge/on_demand"


def relabelled(snap: PriceSnapshot, source: str) -> PriceSnapshot:
    """The same quotes as if read from `source` (the basis follows the source)."""
    data = json.loads(snap.model_dump_json())
    data["source"] = source
    data.pop("basis")
    for q in data["quotes"]:
        q["source"] = source
        q.pop("basis")
    return PriceSnapshot.model_validate(data)


# -- the basis ---------------------------------------------------------------------------------
def test_bases_are_ordered_and_the_weakest_wins():
    assert [b.strength for b in PriceBasis] == [3, 2, 1, 0]
    assert weakest([PriceBasis.official, PriceBasis.example, None]) == PriceBasis.example
    assert weakest([PriceBasis.saved_file, PriceBasis.assumed]) == PriceBasis.assumed
    assert weakest([None]) is None
    assert capped(PriceBasis.official, PriceBasis.saved_file) == PriceBasis.saved_file
    assert capped(PriceBasis.example, PriceBasis.saved_file) == PriceBasis.example


def test_a_quote_cannot_claim_more_than_its_source_carries():
    q = json.loads(instance_quote("trn2.48xlarge", "36.00").model_dump_json())
    assert q["basis"] == "official"  # query_api: fetched by trncost
    with pytest.raises(ValueError, match="does not match source"):
        type(instance_quote("trn2.48xlarge", "1")).model_validate(
            {**q, "source": "saved_price_list_file", "basis": "official"}
        )


def test_an_official_estimate_says_so_line_by_line_and_splits_cloud_from_labour():
    est = estimate(example_one())
    assert est.price_basis == PriceBasis.official
    priced = [li for li in est.line_items if li.price_key]
    assert priced and all(li.price_basis == PriceBasis.official for li in priced)
    rows = {r.id: r for r in est.inputs}
    assert rows["price:AmazonEC2/us-east-1/trn2.48xlarge/on_demand"].price_basis == "official"
    assert rows["assumption:idle_fraction"].price_basis is None
    # engineering 10 h × $100 = $1,000 is labour, not an AWS price: no basis, not on the bill
    eng = line(est, "engineering (adaptation, debugging)")
    assert eng.cost == "labour" and eng.price_basis is None
    # cloud = $3,333.651485 total − $1,000 labour = $2,333.651485 (test_worked_examples)
    assert est.labour_usd == Decimal("1000.000000")
    assert est.cloud_usd == Decimal("2333.651485")
    assert est.cloud_usd + est.labour_usd == est.total_usd
    assert est.basis_notes() == []


@pytest.mark.parametrize(
    ("source", "basis"),
    [("saved_price_list_file", "saved_file"), ("example_file", "example")],
)
def test_prices_from_a_file_never_read_as_official(source, basis):
    inp = example_one()
    est = estimate(inp.model_copy(update={"prices": relabelled(inp.prices, source)}))
    assert est.price_basis == basis
    assert {li.price_basis for li in est.line_items if li.price_key} == {basis}
    # the figures are the same prices: only what they are called changes
    assert est.total_usd == estimate(inp).total_usd
    notes = est.basis_notes()
    assert notes[0].startswith(f"{PriceBasis(basis).label}: ")
    assert any("trn2.48xlarge (us-east-1) $36/h" in n for n in notes)


def test_a_what_if_override_is_assumed_and_gets_a_headline_badge():
    # trn3 has no price; the user tries $45/h: COMPLETE, but on an assumed price
    inp = example_two()
    over = {
        "checkpoint_interval_s": 1800,
        "failure_rate_per_instance_hour": 0.15,  # example two's, stated (its fixed point)
        "price_overrides": [
            {
                "key": {"service": "AmazonEC2", "region": "us-east-1", "item": "trn3.48xlarge"},
                "usd": "45",
                "unit": "instance-hour",
                "note": "what if",
            }
        ],
    }
    est = estimate(
        inp.model_copy(update={"assumptions": type(inp.assumptions).model_validate(over)})
    )
    assert est.status == "complete" and est.price_basis == PriceBasis.assumed
    li = line(est, "4× trn3.48xlarge")
    # 4 × 52,800 s / 3,600 = 58.667 h × $45 = $2,640
    assert li.price_basis == "assumed" and li.amount_usd == Decimal("2640.000000")
    row = next(r for r in est.inputs if r.id == f"price:{TRN3}")
    assert row.price_basis == "assumed" and row.provenance.kind == "user_assumption"
    assert row.unit == "USD/Hrs"  # the plain name is stored as the Price List writes it
    # the weakest line decides, even though most prices are official
    assert {li.price_basis for li in est.line_items if li.price_key} == {"official", "assumed"}
    assert est.basis_notes()[0] == (
        "assumed price: trn3.48xlarge (us-east-1) $45/h, your override (what if)"
    )
    assert any(w.code == "assumed_prices" for w in est.warnings)
    page = render_report(est)
    assert 'id="price-basis" data-basis="assumed"' in page
    assert "assumed price: trn3.48xlarge (us-east-1) $45/h, your override" in page
    assert 'class="basis basis-assumed"' in page  # in the line items and the input table


def test_the_headline_shows_the_cloud_bill_and_the_labour_apart():
    est = estimate(example_one())
    page = render_report(est)
    assert 'id="cloud-usd"' in page and "$2,333.65" in page
    assert 'id="labour-usd"' in page and "$1,000.00" in page
    assert 'data-basis="official"' in page and "every price is official" in page
    pending = render_report(estimate(example_two()))
    # the cloud bill waits on the trn3 price: PENDING, never a number
    assert 'id="cloud-usd"' in pending and "waits on a PENDING price" in pending


# -- typed overrides ---------------------------------------------------------------------------
def with_override(inp, **override):
    data = inp.assumptions.model_dump(mode="json", exclude_none=True)
    data["price_overrides"] = [override]
    return inp.model_copy(update={"assumptions": type(inp.assumptions).model_validate(data)})


TRN2_KEY = {"service": "AmazonEC2", "region": "us-east-1", "item": "trn2.48xlarge"}


@pytest.mark.parametrize("unit", ["Hrs", "hrs", "instance-hour", " Instance-Hour "])
def test_an_override_unit_is_the_keys_billing_unit_in_either_spelling(unit):
    o = PriceOverride.model_validate({"key": TRN2_KEY, "usd": "30", "unit": unit})
    assert o.unit == "Hrs"
    est = estimate(with_override(example_one(), key=TRN2_KEY, usd="30", unit=unit))
    # 2 × 100,200 s / 3,600 × $30 = $1,670
    assert line(est, "2× trn2.48xlarge").amount_usd == Decimal("1670.000000")


@pytest.mark.parametrize("unit", ["GB-Mo", "GB-month", "hour", "USD/h", "Metrics"])
def test_a_wrong_override_unit_is_refused_naming_the_field_and_the_keys(unit):
    with pytest.raises(InvalidInput) as err:
        estimate(with_override(example_one(), key=TRN2_KEY, usd="30", unit=unit))
    assert err.value.fields == ["assumptions.price_overrides.0.unit"]
    message = str(err.value)
    assert "AmazonEC2/us-east-1/trn2.48xlarge/on_demand is billed in Hrs (instance-hour)" in message
    assert "AmazonS3/us-east-1/s3:standard-storage/on_demand (GB-Mo (GB-month))" in message


def test_an_override_of_a_key_the_candidate_does_not_use_is_refused():
    p5 = {"service": "AmazonEC2", "region": "us-east-1", "item": "p5.48xlarge"}
    with pytest.raises(InvalidInput) as err:
        estimate(with_override(example_one(), key=p5, usd="30", unit="Hrs"))
    assert err.value.fields == ["assumptions.price_overrides.0.key"]
    assert "p5.48xlarge/on_demand is not a price this estimate uses" in str(err.value)
    assert "AmazonEC2/us-east-1/trn2.48xlarge/on_demand (Hrs (instance-hour))" in str(err.value)


def test_a_usage_override_in_gb_months():
    gp3 = {"service": "AmazonEC2", "region": "us-east-1", "item": "ebs:gp3"}
    est = estimate(with_override(example_one(), key=gp3, usd="0.04", unit="GB-month"))
    # half the $0.08 rate: $0.610046 / 2 = $0.305023
    assert abs(line(est, "EBS gp3 volumes").amount_usd - Decimal("0.305023")) <= Decimal("1e-6")
    assert line(est, "EBS gp3 volumes").price_basis == "assumed"


def test_a_shared_override_in_a_comparison_needs_one_candidate_that_uses_it():
    base = example_one()
    trn3 = base.model_copy(update={"candidate": candidate("trn3.48xlarge", 2)})
    t3 = trial("t-3", instance_type="trn3.48xlarge", phase="target", count=2)
    trn3 = trn3.model_copy(update={"trials": [*base.trials, t3]})
    key = {"service": "AmazonEC2", "region": "us-east-1", "item": "trn3.48xlarge"}
    a, b = (
        with_override(base, key=key, usd="40", unit="Hrs"),
        with_override(trn3, key=key, usd="40", unit="Hrs"),
    )
    out = analyse([a, b], samples=1000)  # used by the trn3 candidate: fine
    assert {c.estimate.price_basis for c in out.candidates if c.estimate} == {"official", "assumed"}
    ranked = {r.candidate_id: r for r in out.comparison.by_cost}
    for r in ranked.values():
        # ranked on the total, shown with its split and basis
        assert r.total_usd == r.cloud_usd + r.labour_usd == r.cost_per_target_usd
    from trncost.report import render_analysis_report

    page = render_analysis_report(out, workload_name="w", workload_id="wl-1")
    assert "AWS bill + assumed labour" in page and 'class="basis basis-assumed"' in page
    assert "assumed price: trn3.48xlarge (us-east-1) $40/h, your override" in page
    bad = {"service": "AmazonEC2", "region": "us-east-1", "item": "p5.48xlarge"}
    with pytest.raises(InvalidInput, match="p5.48xlarge/on_demand is not a price"):
        analyse([with_override(base, key=bad, usd="40", unit="Hrs"), b], samples=1000)


# -- PENDING is never a number -------------------------------------------------------------------
def test_a_component_with_a_pending_line_has_no_subtotal():
    est = estimate(example_two())
    assert est.status == "incomplete"
    # the trn3 instance-hours and the trn3 trial wait on the price: null, never 0
    assert est.components[Component.instances] is None
    assert est.components[Component.adaptation_reruns] is None
    # logs $10.56 + $0.006365; transfer $19.008 (test_worked_examples): known, so numbers
    assert est.components[Component.data_transfer] == Decimal("19.008000")
    assert est.components[Component.storage] == Decimal(0)  # nothing of it is charged
    assert est.cloud_usd is None and est.labour_usd == Decimal(0)
    dumped = json.loads(est.model_dump_json())
    assert dumped["components"]["instances"] is None


def test_an_infeasible_estimate_has_no_known_total():
    est = estimate(
        tiny(failure_rate_per_instance_hour=1.0, restart_s=1800, checkpoint_interval_s=3600)
    )
    assert est.status == "infeasible"
    assert est.total_known_usd is None and est.total_usd is None
    assert est.cloud_usd is None and est.labour_usd is None and est.price_basis is None
    assert set(est.components) == set(Component) and all(v is None for v in est.components.values())


# -- SageMaker ------------------------------------------------------------------------------------
def sagemaker_prices() -> PriceSnapshot:
    data = json.loads(SAGEMAKER.read_text())
    catalog = Catalog(instance_types=["ml.trn1.32xlarge", "c7i.16xlarge"], regions=["us-east-1"])
    from datetime import UTC, datetime

    return snapshot_from_saved(data, catalog, datetime(2026, 11, 30, tzinfo=UTC))


def test_a_sagemaker_candidate_is_priced_from_the_sagemaker_training_price():
    instance_type = "ml.trn1.32xlarge"
    sm = {"instance_type": "ml.trn1.32xlarge", "instance_count": 2, "region": "us-east-1"}
    t = trial(
        "t-sm",
        instance_type="ml.trn1.32xlarge",
        phase="target",
        count=2,
        work=3.6e8,
        wall={"steady_s": 3600},
        candidate={**sm, "platform": "sagemaker"},
        billed_instance_seconds=7300.0,
    )
    est = estimate(
        inputs(
            wl=workload(target={"unit": "tokens", "amount": 1e6}),
            cand=candidate(instance_type, 2, platform="sagemaker"),
            trials=[t],
            prices=sagemaker_prices(),
            assumptions={"failure_rate_per_instance_hour": 0},  # the billing arithmetic alone
        )
    )
    name = f"2× {instance_type}"
    li = line(est, name)
    assert li.price_key == "AmazonSageMaker/us-east-1/ml.trn1.32xlarge/on_demand"
    # the USE1-Train:ml.trn1.32xlarge product at $28.497/h, not the hosting one
    row = next(r for r in est.inputs if r.id == f"price:{li.price_key}")
    assert row.provenance.sku == "EXSMTRN1TRAINUE1" and row.value == "28.497"
    # held 10 s, billed 10 s (SageMaker billable seconds, no 60 s minimum):
    # 2 × 10 / 3,600 × $28.497 = $0.158316(67) → $0.158317
    assert li.amount_usd == Decimal("0.158317")
    billed = next(r for r in est.inputs if r.id == "billing:seconds_per_instance")
    assert billed.value == 10 and "no minimum" in billed.label
    # the trial as SageMaker billed it: 7,300 s × $28.497 / 3,600 = $57.785583
    trial_line = line(est, "trial t-sm (target, 2× ml.trn1.32xlarge)")
    assert trial_line.price_key == li.price_key
    assert trial_line.amount_usd == Decimal("57.785583")
    assert est.price_basis == "saved_file"  # read from a file, never official


@pytest.mark.parametrize("stated", [{}, {"platform": "ec2"}, {"platform": "sagemaker"}])
def test_an_ml_type_is_a_sagemaker_candidate_whatever_platform_it_states(stated):
    c = Candidate.model_validate(
        {"instance_type": "ml.trn1.32xlarge", "instance_count": 2, "region": "us-east-1", **stated}
    )
    assert c.platform == "sagemaker" and c.on_sagemaker
    ec2 = Candidate(instance_type="trn1.32xlarge", instance_count=2, region="us-east-1")
    assert ec2.platform == "ec2" and not ec2.on_sagemaker


# -- the caller of an upload and the stage's setting -------------------------------------------
def test_the_caller_is_the_iam_arn_behind_api_gateway_or_local():
    arn = "arn:aws:iam::123456789012:user/alice"
    assert caller_arn({"requestContext": {"identity": {"userArn": arn}}}) == arn
    assert caller_arn({"requestContext": {"identity": {"sourceIp": "127.0.0.1"}}}) == "local"
    assert caller_arn({"requestContext": {"identity": {"userArn": " "}}}) == "local"
    assert caller_arn({}) == "local"


@pytest.mark.parametrize(
    ("value", "accepted"), [(None, False), ("false", False), ("true", True), ("1", True)]
)
def test_uploads_become_latest_only_where_the_stage_says(value, accepted):
    env = {"TRNCOST_TABLE": "t", **({ACCEPT_UPLOADS_ENV: value} if value else {})}
    assert Settings.from_env(env).accept_uploads is accepted


def test_deployed_stages_do_not_accept_uploads_by_default():
    from stacks.config import StageConfig, load_stage_configs

    root = Path(__file__).resolve().parents[2]
    stages = load_stage_configs(json.loads((root / "cdk.json").read_text())["context"])
    assert all(not s.prices.accept_uploads for s in stages.values())
    minimal = StageConfig.model_validate(
        {
            "region": "us-east-1",
            "catalog": {"instance_types": ["trn2.48xlarge"], "regions": ["us-east-1"]},
        }
    )
    assert minimal.prices.accept_uploads is False
    # the dev catalog prices SageMaker training too
    assert any(t.startswith("ml.") for t in stages["dev"].catalog.instance_types)
