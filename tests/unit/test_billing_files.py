"""Billing exports read as AWS delivers them (FOCUS 1.2, CUR 2.0; CSV, gzip CSV, Parquet):
rows counted, each estimate's lines summed per billing period, every spelling of the tag key
matched and reported, bad input named by its column and row."""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path

import pytest

from tests.support.actuals_kit import (
    BILLING,
    CUR_SAMPLE,
    FOCUS_SAMPLE,
    SAMPLE_ESTIMATE,
    csv_text,
    focus_header,
    focus_row,
)
from trncost.billing.files import read_bill_bytes, read_bill_file
from trncost.billing.rows import merge
from trncost.billing.tags import spellings
from trncost.errors import InvalidInput

TAGGED_ROWS = 11  # of the samples' 16: the rest untagged (4) or tagged with a workload only (1)


def _lines(bill) -> dict[tuple, tuple]:
    """Each group's lines by what they bill, for comparing two readings."""
    return {
        (
            g.source.split(":")[1],
            g.period,
            g.estimate_id,
            x.usage_type,
            x.charge_category,
            x.charge_class,
        ): (  # fmt: skip
            x.quantity,
            x.billed_usd,
            x.rows,
        )
        for g in bill.groups
        for x in g.lines
    }


def test_the_focus_sample_is_counted_and_summed_per_estimate_and_period():
    # Given AWS's FOCUS 1.2 export of June 2025 (constructed from the column definitions)
    bill = read_bill_file(FOCUS_SAMPLE)
    # Then every row is counted, the tagged ones summed into their estimate's lines
    assert bill.format == "focus_1_2"
    assert (bill.rows_read, bill.untagged_rows, bill.without_estimate_rows) == (16, 4, 1)
    assert bill.matched_rows == TAGGED_ROWS
    assert [(d.source, d.period) for d in bill.deliveries] == [
        ("focus_1_2:111122223333", "2025-06")
    ]
    (group,) = bill.groups
    assert (group.estimate_id, group.workload_id) == (SAMPLE_ESTIMATE, "wl-7")
    hours = next(
        x
        for x in group.lines
        if x.usage_type == "USE2-BoxUsage:trn2.48xlarge" and x.charge_class is None
    )
    assert (hours.quantity, hours.billed_usd, hours.rows) == (Decimal(68), Decimal(2720), 3)
    assert hours.first_charge == "2025-06-10T00:00:00Z"
    # And the spelling of the key the rows used is said
    assert bill.tag_keys_seen == {"trncost:estimate-id": TAGGED_ROWS}


def test_the_cur_sample_gives_the_same_lines_from_resource_tags():
    # Given the same charges as a CUR 2.0 export (resource_tags normalised, tags prefixed)
    focus, cur = read_bill_file(FOCUS_SAMPLE), read_bill_file(CUR_SAMPLE)
    # Then the same usage is read, per estimate, quantity and cost
    usage = {k[3]: v[:2] for k, v in _lines(focus).items() if k[4:] == ("Usage", None)}
    cur_usage = {k[3]: v[:2] for k, v in _lines(cur).items() if k[4:] == ("Usage", None)}
    assert usage == cur_usage
    # And resource_tags was read first: its normalised spelling is the one reported
    assert cur.tag_keys_seen == {"user_trncost_estimate_id": TAGGED_ROWS}
    # And the refund (line type Refund) is a correction, apart from usage
    refund = [x for g in cur.groups for x in g.lines if x.charge_class == "Correction"]
    assert [(x.charge_category, x.billed_usd) for x in refund] == [("Credit", Decimal("-120.00"))]


@pytest.mark.parametrize("spelling", spellings("trncost:estimate-id"))
def test_every_spelling_of_the_tag_key_is_matched_and_named(spelling):
    # Given a FOCUS row whose Tags name the estimate under one spelling AWS may use
    header = focus_header()
    row = focus_row(
        header,
        BilledCost="10",
        BillingPeriodStart="2026-12-01T00:00:00Z",
        ChargePeriodStart="2026-12-02T00:00:00Z",
        ChargePeriodEnd="2026-12-03T00:00:00Z",
        ServiceName="Amazon Elastic Compute Cloud",
        Tags={spelling: "est-abc"},
    )
    # When it is read
    bill = read_bill_bytes(csv_text(header, [row]).encode())
    # Then it is the estimate's, and the spelling is reported
    assert [g.estimate_id for g in bill.groups] == ["est-abc"]
    assert bill.tag_keys_seen == {spelling: 1}


def test_a_record_across_lines_and_blank_lines_are_read_as_csv_says():
    # Given a row whose description holds a line break (a quoted field), and a blank line
    header = focus_header()
    row = focus_row(
        header,
        BilledCost="1.5",
        BillingPeriodStart="2026-12-01T00:00:00Z",
        ChargePeriodStart="2026-12-02T00:00:00Z",
        ChargePeriodEnd="2026-12-03T00:00:00Z",
        ChargeDescription='two\nlines, "quoted"',
        ServiceName="AmazonCloudWatch",
        Tags={"trncost:estimate-id": "est-abc"},
    )
    text = csv_text(header, [row, row]) + "\n"
    # When it is read
    bill = read_bill_bytes(text.encode())
    # Then two rows, summed into one line
    assert bill.rows_read == 2
    (line,) = bill.groups[0].lines
    assert (line.rows, line.billed_usd) == (2, Decimal(3))


def test_gzip_csv_reads_as_the_csv_it_holds():
    data = FOCUS_SAMPLE.read_bytes()
    assert read_bill_bytes(gzip.compress(data)) == read_bill_bytes(data)


def _parquet(
    tmp_path: Path, csv_path: Path, maps: tuple[str, ...], doubles: tuple[str, ...]
) -> Path:
    """`csv_path` as AWS's Parquet export types it: tag maps as MAP(VARCHAR, VARCHAR), costs
    as DOUBLE (the CID Glue schemas)."""
    import duckdb

    out = tmp_path / (csv_path.stem + ".parquet")
    con = duckdb.connect()
    names = [r[0] for r in con.execute(
        "DESCRIBE SELECT * FROM read_csv(?, all_varchar=true)", [str(csv_path)]
    ).fetchall()]  # fmt: skip
    columns = []
    for n in names:
        q = f'"{n}"'
        if n in maps:
            columns.append(
                f"CASE WHEN {q} IS NULL OR {q} = '' THEN NULL ELSE "
                f"CAST(json({q}) AS MAP(VARCHAR, VARCHAR)) END AS {q}"
            )
        elif n in doubles:
            columns.append(f"TRY_CAST({q} AS DOUBLE) AS {q}")
        else:
            columns.append(q)
    con.execute(
        f"COPY (SELECT {', '.join(columns)} FROM read_csv(?, all_varchar=true)) TO "
        f"'{out}' (FORMAT PARQUET)",
        [str(csv_path)],
    )
    return out


def test_parquet_exports_read_as_their_csv_twins(tmp_path):
    # Given the FOCUS and CUR samples as Parquet, tags as maps and costs as doubles
    focus = _parquet(
        tmp_path, FOCUS_SAMPLE, ("Tags",), ("BilledCost", "ListCost", "PricingQuantity")
    )
    cur = _parquet(
        tmp_path,
        CUR_SAMPLE,
        ("resource_tags", "tags"),
        ("line_item_unblended_cost", "line_item_usage_amount", "pricing_public_on_demand_cost"),
    )
    # When they are read (from disk, and as an API body)
    for parquet, twin in ((focus, FOCUS_SAMPLE), (cur, CUR_SAMPLE)):
        from_file = read_bill_file(parquet)
        from_body = read_bill_bytes(parquet.read_bytes())
        from_csv = read_bill_file(twin)
        # Then the same rows, estimates and lines as the CSV (costs as DuckDB gives doubles)
        assert from_file.rows_read == from_csv.rows_read == 16
        assert from_file.matched_rows == from_csv.matched_rows == TAGGED_ROWS
        assert _lines(from_file) == _lines(from_body)
        assert {k: (float(v[1]), v[2]) for k, v in _lines(from_file).items()} == {
            k: (float(v[1]), v[2]) for k, v in _lines(from_csv).items()
        }


def test_a_delivery_in_parts_merges_into_the_whole():
    # Given the sample split into two files of one delivery
    lines = FOCUS_SAMPLE.read_text().splitlines(keepends=True)
    head, body = lines[0], lines[1:]
    first = read_bill_bytes("".join([head, *body[:7]]).encode(), "part-1")
    second = read_bill_bytes("".join([head, *body[7:]]).encode(), "part-2")
    # Then merged they are the whole file's bill
    whole = read_bill_file(FOCUS_SAMPLE)
    merged = merge([first, second])
    assert merged.files == ["part-1", "part-2"]
    assert merged.rows_read == whole.rows_read and _lines(merged) == _lines(whole)


def test_real_aws_focus_rows_without_trncost_tags_are_counted_not_kept():
    # Given 19 real (anonymized) AWS FOCUS 1.0 rows: no trncost tag on any of them
    bill = read_bill_file(BILLING / "real" / "finops_focus_sample_data_aws_focus_1_0_subset.csv")
    # Then they are read and counted, none kept
    assert (bill.rows_read, bill.untagged_rows, bill.groups) == (19, 19, [])


def test_a_legacy_cur_is_refused_with_what_to_export_instead():
    legacy = BILLING / "real" / "focus_converters_legacy_cur_anonymized_subset.csv"
    with pytest.raises(InvalidInput, match="legacy CUR .* export CUR 2.0 or FOCUS 1.2"):
        read_bill_file(legacy)


@pytest.mark.parametrize(
    ("change", "message", "field"),
    [
        (("BilledCost", "12 USD"), r"BilledCost: '12 USD' is not a number \(body row 1\)",
         "BilledCost"),
        (("BillingPeriodStart", "June"), r"BillingPeriodStart: 'June' is not a date",
         "BillingPeriodStart"),
        (("ChargeCategory", "Fee"), "ChargeCategory: 'Fee' is not one of", "ChargeCategory"),
        (("Tags", "{trncost:estimate-id"), r"Tags: not a JSON object \(body row 1\)", "Tags"),
    ],
)  # fmt: skip
def test_a_bad_tagged_row_is_refused_naming_its_column_and_row(change, message, field):
    # Given a tagged row with one bad value
    header = focus_header()
    values = {
        "BilledCost": "10",
        "BillingPeriodStart": "2026-12-01T00:00:00Z",
        "ChargePeriodStart": "2026-12-02T00:00:00Z",
        "ChargePeriodEnd": "2026-12-03T00:00:00Z",
        "ServiceName": "Amazon Elastic Compute Cloud",
        "Tags": json.dumps({"trncost:estimate-id": "est-abc", "note": "trncost:x"}),
    }
    values[change[0]] = change[1]
    text = csv_text(header, [focus_row(header, **values)])
    # Then it is refused: the column and the row named
    with pytest.raises(InvalidInput, match=message) as caught:
        read_bill_bytes(text.encode())
    assert caught.value.fields == [field]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "empty"),
        (b"a,b,c\n1,2,3\n", "neither a FOCUS 1.2 export"),
        (b"BilledCost,Tags\n", "has no BillingPeriodStart, ChargePeriodStart"),
        (b"\xff\xfe\x00garbage", "not UTF-8"),
        (gzip.compress(b"BilledCost\n", mtime=0)[:12], "body"),  # a fixed header: one test id
    ],
)
def test_what_is_not_an_export_is_refused_saying_why(body, message):
    with pytest.raises(InvalidInput, match=message):
        read_bill_bytes(body)


# -- Cost Explorer's answer and the budget request ------------------------------------------------
def test_cost_explorer_grouped_by_the_tag_alone_reads_too():
    from datetime import date

    from trncost.billing.cost_explorer import parse

    # Given the constructed answer grouped by the estimate tag only (two pages)
    sample = json.loads((BILLING / "ce_get_cost_and_usage_by_tag.json").read_text())
    bill = parse(sample["response_pages"], date(2025, 6, 1), date(2025, 7, 1))
    # Then the tagged amounts are the estimate's, untagged spend ('trncost:estimate-id$') not
    assert (bill.rows_read, bill.untagged_rows) == (4, 2)
    (group,) = bill.groups
    assert group.estimate_id == SAMPLE_ESTIMATE and group.estimated
    assert sum(x.billed_usd for x in group.lines) == Decimal("807.853333336") + Decimal(
        "2098.180555554"
    )
    assert [(d.source, d.period) for d in bill.deliveries] == [("cost_explorer", "2025-06")]


def test_the_budget_request_is_the_preferred_form_and_botocore_accepts_it():
    from datetime import date

    import botocore.session
    from botocore.validate import ParamValidator

    from trncost.billing.budgets import create_request
    from trncost.model.actuals import BudgetSubscriber

    # Given the request trncost makes for an estimate
    request = create_request(
        account_id="111122223333",
        estimate_id="est-123",
        limit=Decimal("3500.004"),
        p50=Decimal("3100"),
        start=date(2025, 6, 1),
        end=date(2025, 7, 1),
        subscribers=[BudgetSubscriber(type="EMAIL", address="ml-owner@example.com")],
    )
    # Then it filters as the constructed sample's preferred form does (FilterExpression on the
    # raw tag key, UnblendedCost), its name has no ':', and botocore's model accepts it
    sample = json.loads((BILLING / "budgets_create_budget_request.json").read_text())
    preferred = sample["preferred_request_FilterExpression"]["Budget"]
    budget = request["Budget"]
    assert budget["FilterExpression"] == preferred["FilterExpression"]
    assert budget["Metrics"] == preferred["Metrics"] and "CostFilters" not in budget
    assert (
        budget["BudgetName"] == "trncost-est-123" and budget["BudgetLimit"]["Amount"] == "3500.00"
    )
    thresholds = [n["Notification"]["Threshold"] for n in request["NotificationsWithSubscribers"]]
    assert thresholds == [3100.0, 3500.0]
    model = botocore.session.get_session().get_service_model("budgets")
    shape = model.operation_model("CreateBudget").input_shape
    report = ParamValidator().validate(request, shape)
    assert not report.has_errors(), report.generate_report()
