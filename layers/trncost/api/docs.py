"""The OpenAPI document as a contract: what Powertools generates from the routes, completed here
in one place with what a person needs to learn the API from it.

For every operation: a summary, a description, an example request (real instance types and
regions, those of the example workload `examples/llama-8b/`; valid assumption values), the
status codes it really answers with and when, and the success status and media type it really
uses (201 for what creates, `text/html` for the reports). Every error is `ErrorBody`
({error, message, fields}: `trncost.api.errors`), documented for each status an operation can
answer with; Powertools' own `HTTPValidationError` ({detail: [...]}) is never answered and is
removed. (How schemas are named, one per model, is trncost.api.openapi's.)

`OPERATIONS` must name every operation of the document and nothing else: `complete` raises
otherwise, so a new route without its documentation fails `make openapi` and the tests.
`tests/integration/test_openapi_examples.py` sends every example here to the real handlers and
checks each answer against what is documented.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}
ERROR_CONTENT = {"application/json": {"schema": ERROR_REF}}
HTML_CONTENT = {"text/html": {"schema": {"type": "string", "description": "an HTML5 page"}}}
# A report route's answers by `?format=`: the page, or its line items and input table.
REPORT_CONTENT = {
    **HTML_CONTENT,
    "text/csv": {"schema": {"type": "string", "description": "?format=csv: one CSV table"}},
    "text/markdown": {"schema": {"type": "string", "description": "?format=md: Markdown"}},
}
REPORT_FORMAT_422 = "a `format` other than html, csv or md"
# Powertools' validation error schemas: trncost answers ErrorBody instead.
POWERTOOLS_ERROR_SCHEMAS = ("HTTPValidationError", "ValidationError", "ResponseValidationError")
UPSTREAM = (
    "an AWS service trncost depends on (DynamoDB, EventBridge, ...) is still throttling or "
    "failing after botocore's retries (`upstream_unavailable`): retry later"
)
BAD_PATH = "a path id that is not an id (1–128 of letters, digits and . _ : + -)"
BAD_PAGE = "`limit` outside 1–100, or a `cursor` this list did not hand out"

# -- the example workload's values (examples/llama-8b/) ----------------------------------------
WORKLOAD_ID = "llama31-8b-cpt"
REGION = "us-east-2"
WORKLOAD = {
    "workload_id": WORKLOAD_ID,
    "name": "Llama 3.1 8B continued pretraining on the cpt-mix-v3 corpus",
    "model": {"name": "llama-3.1-8b", "parameters": 8030000000.0},
    "code_version": "git:4f2a9c1",
    "dataset_id": "s3://team-data/cpt-mix-v3@2026-10-01",
    "target": {"unit": "tokens", "amount": 50000000000.0},
    "quality_gate": {"metric": "eval_loss", "threshold": 2.05, "direction": "at_most"},
    "tokens_per_sample": 8192,
    "samples_per_step": 512,
    "dataset_gb": 420,
}
TRN2 = {
    "instance_type": "trn2.48xlarge",
    "instance_count": 4,
    "region": REGION,
    "framework": "torch-neuronx",
    "neuron_sdk_version": "2.27.0",
    "parallelism": {"tensor": 8},
}
TRN3 = {**TRN2, "instance_type": "trn3.48xlarge", "instance_count": 2}
P5 = {
    "instance_type": "p5.48xlarge",
    "instance_count": 4,
    "region": REGION,
    "framework": "pytorch",
    "parallelism": {"tensor": 8},
}
ASSUMPTIONS = {
    "idle_fraction": {"value": 0.05, "note": "queueing between job restarts and evaluation gaps"},
    "ebs_gb_per_instance": {"value": 500, "note": "gp3 root + scratch volume per node"},
    "checkpoints_retained": {"value": 3, "note": "keep the last three checkpoints in S3"},
    "storage_months_after_run": {"value": 1, "note": "dataset and checkpoints kept a month"},
    "engineering_hours": {"value": 120, "note": "port to NxD Training, fix two unsupported ops"},
    "engineering_hourly_usd": {"value": "110", "note": "loaded engineer cost, finance sheet"},
}
# A trial of the example workload that examples/llama-8b/trials.json does not hold: a second
# trn2 fit run at one instance (the file's own trn2-fit-01, re-run on a later code version).
TRIAL = {
    "trial_id": "trn2-fit-02",
    "workload_id": WORKLOAD_ID,
    "phase": "fit",
    "status": "completed",
    "candidate": {
        "instance_type": "trn2.48xlarge",
        "instance_count": 1,
        "region": REGION,
        "purchase_option": "on_demand",
        "platform": "ec2",
        "framework": "torch-neuronx",
        "framework_version": "2.9",
        "neuron_sdk_version": "2.27.0",
        "parallelism": {"tensor": 8, "pipeline": 1},
    },
    "timing_scope": {
        "compile": True,
        "data_loading": True,
        "checkpoints": True,
        "evaluation": True,
    },
    "work": {"unit": "tokens", "done": 43200000, "quality_meeting": 43200000},
    "wall": {
        "compile_s": 180,
        "compile_cache_hit": True,
        "warmup_s": 240,
        "steady_s": 900,
        "data_wait_s": 27,
        "checkpoint_save_s": 90,
        "evaluation_s": 36,
    },
    "steady_throughput_samples": [46560, 48480, 48000, 47520, 49440],
    "utilization": {"neuroncore": 0.61},
    "reliability": {"errors": 0, "failures": 0, "reruns": 0, "rerun_s": 0},
    "checkpointing": {"saves": 1, "size_gb": 112.0, "restore_verified": True},
    "usage": {"log_ingest_gb": 0.013, "custom_metrics": 40, "transfer_out_gb": 0.05},
    "code_version": "git:4f2a9c1",
    "dataset_id": "s3://team-data/cpt-mix-v3@2026-10-01",
    "framework_version": "2.9",
    "neuron_sdk_version": "2.27.0",
    "quality": {"metric": "eval_loss", "value": 2.61},
}
# An excerpt of a Hugging Face Trainer log (the format's own keys: `{'loss': …}` lines and
# train_runtime), as a trial's stdout shows it.
TRAINER_LOG = (
    "{'loss': 2.9812, 'grad_norm': 1.21, 'learning_rate': 2.9e-05, 'epoch': 0.01}\n"
    "{'loss': 2.7433, 'grad_norm': 0.98, 'learning_rate': 2.8e-05, 'epoch': 0.02}\n"
    "{'eval_loss': 2.6105, 'eval_runtime': 36.2, 'epoch': 0.02}\n"
    "{'train_runtime': 1380.4, 'train_samples_per_second': 5.93, 'train_steps_per_second': 0.012,"
    " 'train_loss': 2.86, 'epoch': 0.02}\n"
)
TRIAL_PLAN = {
    "plan_id": "llama31-8b-trn3-plan",
    "candidates": [{"instance_type": "trn3.48xlarge", "instance_count": 2, "region": REGION}],
    "launcher": "ec2",
    "ami": "ami-0abcdef1234567890",
    "ec2": {
        "subnet_id": "subnet-0abc1234def567890",
        "security_group_ids": ["sg-0123456789abcdef0"],
    },
    "entry_command": ["torchrun", "--nproc_per_node=32", "train.py"],
    "fit": {"steps": 50},
    "baseline": {"steps": 200, "repeats": 3, "cv_limit": 0.05},
    "target": {"steps": 2000, "instance_counts": [2, 4]},
    "budget_cap_usd": "2500",
    "max_run_minutes": 240,
}
COMPARISON = {
    "candidates": [
        {"candidate": TRN2, "limited_features": []},
        {"candidate": TRN3},
        {"candidate": P5},
    ],
    "assumptions": ASSUMPTIONS,
    "seed": 7,
    "samples": 2000,
}
PAGE_QUERY = {"limit": 20}
# Ids the server makes (an estimate, a comparison, a price snapshot): an example of their form.
ESTIMATE_ID = "est-3f9c1a2b4d5e"
COMPARISON_ID = "cmp-8e1f0c3a9b2d4e6f"
SNAPSHOT_ID = "ps-20261201T060000Z-1a2b3c4d"


@dataclass(frozen=True)
class Operation:
    summary: str
    description: str
    errors: dict[int, str] = field(default_factory=dict)  # status → when
    example: Any = None  # the request body's example
    params: dict[str, Any] = field(default_factory=dict)  # path and query examples
    created: str | None = None  # what a 201 means (the 200 stays when `repeat` says why)
    repeat: str | None = None  # what a 200 means beside a 201
    html: bool = False
    location: bool = False  # a 201 says where the new record is (Location)
    upstream: bool = True  # it calls AWS: a 503 when a service still fails after retries
    # a request body the route reads itself (not a model): its media types, as OpenAPI says them
    request_content: dict[str, Any] | None = None


def _wl(**more: Any) -> dict[str, Any]:
    return {"workload_id": WORKLOAD_ID, **more}


OPERATIONS: dict[tuple[str, str], Operation] = {
    ("get", "/health"): Operation(
        "Liveness and version",
        "Answers `{status: ok, version}` when the API function runs; touches no AWS service.",
        upstream=False,
    ),
    # -- workloads ------------------------------------------------------------------------------
    ("post", "/workloads"): Operation(
        "Create a workload",
        "A workload is the training job to be costed: the model, the target (an amount of work "
        "that reaches a quality gate), the dataset and the code version trials must share. It "
        "is written once; the answer carries `created_by`, the caller.",
        {
            409: "a workload with this `workload_id` exists (records are written once)",
            422: "a field is missing or out of its bound; the message and `fields` name it",
        },
        example=WORKLOAD,
        created="the workload, stored",
    ),
    ("get", "/workloads"): Operation(
        "List workloads",
        "Newest first, a page at a time: pass `next_cursor` back as `cursor` for the next.",
        {422: BAD_PAGE},
        params=PAGE_QUERY,
    ),
    ("get", "/workloads/{workload_id}"): Operation(
        "Read a workload",
        "The workload as it was created.",
        {404: "no workload with this id", 422: BAD_PATH},
        params=_wl(),
    ),
    # -- trials ---------------------------------------------------------------------------------
    ("post", "/workloads/{workload_id}/trials"): Operation(
        "Import a trial record",
        "A trial measured outside trncost (or re-sent): written once under the workload the "
        'path names, announced as "Trial Recorded", and the workload\'s estimates refresh '
        "(a version is added only when a figure moves). Trials a job's event or agent reports "
        "arrive by ingest instead.",
        {
            404: "no workload with this id",
            409: "a trial with this `trial_id` is recorded",
            422: "a field is invalid or out of bound, or the trial names another workload",
        },
        example=TRIAL,
        params=_wl(),
        created="the trial, recorded (`recorded_by`: the caller)",
    ),
    ("post", "/workloads/{workload_id}/trials/import"): Operation(
        "Make a trial record from its training logs",
        "Give a trial's own logs (Hugging Face Trainer, Lightning, NeMo, Megatron, Neuron "
        "compiler, TensorBoard, ...) and what they cannot say (phase, instance type and "
        "count): the trial is built from what the logs measured, each figure with its source, "
        "and recorded like an imported trial. `dry_run` builds it without writing. The same "
        "logs are the same trial id.",
        {
            404: "no workload with this id",
            409: "the trial id is recorded with other content",
            413: "more log text than an import takes (the body may be up to 6 MB)",
            422: "a log in no format trncost reads (each format tried, and why), or a field "
            "invalid",
        },
        example={
            "files": [{"name": "train.log", "text": TRAINER_LOG}],
            "phase": "fit",
            "instance_type": "trn2.48xlarge",
            "instance_count": 1,
            "region": REGION,
            "global_batch_size": 8,
            "seq_length": 8192,
            "code_version": "git:4f2a9c1",
            "dataset_id": "s3://team-data/cpt-mix-v3@2026-10-01",
            "dry_run": True,
        },
        params=_wl(),
        created="the trial, recorded",
        repeat="a dry run, or logs already recorded: nothing written (`recorded: false`)",
    ),
    ("post", "/workloads/{workload_id}/trials/{trial_id}/retract"): Operation(
        "Retract a trial record",
        "Evidence is corrected, never rewritten: the record stays, marked with who retracted it, "
        "when and why, and every estimate of the workload is recomputed without it (admission "
        "`retracted`: neither evidence nor cost); the new version lists what moved. To correct "
        'a trial, record the corrected one with `"supersedes": "<trial_id>"` instead: that '
        "retracts this one and names the correction.",
        {
            404: "no such workload, or no such trial in it",
            409: "the trial was retracted before",
            422: "no `reason`, or `superseded_by` given (a trial names what it supersedes)",
        },
        example={"reason": "recorded twice: the same run as trn2-fit-01"},
        params=_wl(trial_id="trn2-fit-02"),
    ),
    ("post", "/workloads/{workload_id}/retract"): Operation(
        "Retract a workload",
        "The workload stays readable (with its trials and estimates), marked with who, when and "
        "why, and optionally the workload that replaces it; it takes no new trial or estimate "
        "(409).",
        {
            404: "no such workload (or no `superseded_by` workload)",
            409: "the workload was retracted before",
            422: "no `reason`",
        },
        example={"reason": "the target was 50B tokens of the wrong corpus"},
        params=_wl(),
    ),
    ("get", "/workloads/{workload_id}/trials"): Operation(
        "List a workload's trials",
        "In the order they were recorded, a page at a time.",
        {404: "no workload with this id", 422: f"{BAD_PATH}; or {BAD_PAGE}"},
        params=_wl(**PAGE_QUERY),
    ),
    ("get", "/trials/{trial_id}"): Operation(
        "Read a trial",
        "The trial record: what it measured, where, and each figure's source. Trial ids are "
        "per workload: with `workload_id`, that workload's trial; without, the id's first "
        "record (a later trial of the same id in another workload never takes its place).",
        {404: "no trial with this id (in this workload)", 422: BAD_PATH},
        params={"trial_id": "trn2-fit-01"},
    ),
    ("get", "/workloads/{workload_id}/trials/{trial_id}"): Operation(
        "Read a workload's trial",
        "The trial record of this id in this workload: what it measured, where, and each "
        "figure's source.",
        {404: "no trial with this id in this workload", 422: BAD_PATH},
        params=_wl(trial_id="trn2-fit-01"),
    ),
    ("get", "/ingest/rejected"): Operation(
        "List rejected ingests",
        "Job events that could not become trial records (no `trncost:workload` tag, an "
        "unknown workload, a malformed event, ...), newest first, each with its reason.",
        {422: "`limit` outside 1–100"},
        params={"limit": 20},
    ),
    # -- estimates ------------------------------------------------------------------------------
    ("post", "/workloads/{workload_id}/estimates"): Operation(
        "Create an estimate",
        "What reaching the workload's target costs on one candidate (instance type, count, "
        "region), from the workload's trials and the latest (or a pinned) price snapshot: "
        "line items, time to target, the PENDING terms of prices without a basis, warnings "
        "and the input table. Stored as version 1; it gets a new version whenever a trial or "
        "a price moves one of its figures.",
        {
            404: "no workload with this id",
            409: "no price snapshot yet (`no_price_snapshot`), or the pinned one does not exist",
            422: "a field invalid (`validation_error`), the trials lack what the estimate needs "
            "(`missing_evidence`, named), or the domain cannot answer as asked (`domain_error`)",
        },
        example={"candidate": TRN2, "assumptions": ASSUMPTIONS},
        params=_wl(),
        created="the estimate, stored as version 1",
    ),
    ("get", "/workloads/{workload_id}/estimates"): Operation(
        "List a workload's estimates",
        "Each estimate with its candidate, its latest version and the headline figures "
        "(status, total or the known part while a price is PENDING, cost per target and per "
        "1M tokens, time to target), a page at a time.",
        {404: "no workload with this id", 422: f"{BAD_PATH}; or {BAD_PAGE}"},
        params=_wl(**PAGE_QUERY),
    ),
    ("get", "/estimates/{estimate_id}"): Operation(
        "Read an estimate",
        "The latest version, or `?version=N`; with why it was made and what moved since the "
        "version before.",
        {
            404: "no estimate (or no such version) with this id",
            422: f"{BAD_PATH}, or a version below 1",
        },
        params={"estimate_id": ESTIMATE_ID, "version": 1},
    ),
    ("get", "/estimates/{estimate_id}/versions"): Operation(
        "List an estimate's versions",
        "Every version, oldest first, each with its reason and the figures that moved; and "
        "the refreshes that could not recompute it, with why.",
        {404: "no estimate with this id", 422: BAD_PATH},
        params={"estimate_id": ESTIMATE_ID},
    ),
    ("get", "/estimates/{estimate_id}/report"): Operation(
        "An estimate's HTML report",
        "A self-contained page (no scripts, no CDN): the headline or the PENDING formula, the "
        "cost breakdown, line items, warnings and the input table with every number's source; "
        "once billed, the estimate against its actuals. `format=focus`: the run's forecast as "
        "FOCUS-shaped CSV rows (ChargePeriodStart/End from `start`, ServiceName, SkuId, "
        "PricingUnit, PricingQuantity, ListUnitPrice, ListCost, x_EstimateId, x_Percentile "
        "point|P10|P50|P90, x_PriceBasis), to sit beside the bill in one FinOps table.",
        {
            404: "no estimate (or no such version) with this id",
            422: f"{BAD_PATH}, a version below 1, or a `start` that is not a date (format focus)",
        },
        params={"estimate_id": ESTIMATE_ID, "version": 1},
        html=True,
    ),
    ("post", "/estimates/{estimate_id}/capacity"): Operation(
        "Quote the capacity an estimate can book",
        "Asks EC2 (DescribeCapacityBlockOfferings) and SageMaker (SearchTrainingPlanOfferings) "
        "now for blocks covering the version's P50 and P90 held time (rounded up to whole days, "
        "then weeks), each offering an `official` priced input with its origin and expiry (its "
        "start), weighed against the version's own draws: the chance the run finishes inside, "
        "the expected cost of extending in whole days or finishing on demand, the saving "
        "against on-demand. Kept with the version (its report shows it). An instance type AWS "
        "or botocore's model does not offer yet is `none_offered`, with why.",
        {
            404: "no estimate (or no such version) with this id",
            422: f"{BAD_PATH}, a version below 1, or no draw of its plan finishes",
        },
        params={"estimate_id": ESTIMATE_ID, "version": 1},
        created="the offerings quoted now, kept with the version",
    ),
    ("get", "/estimates/{estimate_id}/capacity"): Operation(
        "The capacity last quoted for an estimate",
        "The Capacity Blocks and Training Plans last quoted for the version (POST asks AWS).",
        {404: "no estimate or version with this id, or no capacity quoted for it", 422: BAD_PATH},
        params={"estimate_id": ESTIMATE_ID, "version": 1},
    ),
    # -- comparisons ----------------------------------------------------------------------------
    ("post", "/workloads/{workload_id}/comparisons"): Operation(
        "Compare candidates (stored)",
        "Ranks the candidates by cost per completed target and by time (comparable ones "
        "only: same work, same clock), with P10/P50/P90 ranges, the tornado, scaling fits, "
        "break-even prices of PENDING candidates, MFU checks, the decision and the credits "
        "runway when credits are given. Stored as an immutable record: the answer and its "
        "`Location` say where to read it again, and `report_url` is the page to share. The "
        "same request on the same evidence (trials, price snapshot) is the same comparison: "
        "a repeat answers 200 with the stored one.",
        {
            404: "no workload with this id",
            409: "no price snapshot yet, or the pinned one does not exist",
            422: "a field invalid (no candidate, more than 12, samples outside 1,000–100,000, "
            "...), or more analysis than a stored comparison holds",
        },
        example=COMPARISON,
        params=_wl(),
        created="the comparison, stored (Location: where to read it)",
        repeat="the same comparison was stored before: the stored record",
        location=True,
    ),
    ("post", "/workloads/{workload_id}/comparisons/report"): Operation(
        "Compare candidates, as an HTML page (not stored)",
        "The analysis of `POST /workloads/{workload_id}/comparisons` as a self-contained page "
        "(decision, ranking, ranges, tornado, scaling curves), computed and not stored; store "
        "one and share `GET /comparisons/{comparison_id}/report` instead.",
        {
            404: "no workload with this id",
            409: "no price snapshot yet, or the pinned one does not exist",
            422: "a field invalid",
        },
        example=COMPARISON,
        params=_wl(),
        html=True,
    ),
    ("get", "/comparisons/{comparison_id}"): Operation(
        "Read a stored comparison",
        "The request as it was computed (its price snapshot resolved), who asked, when, and "
        "the analysis. It never changes: a new trial or price makes a new comparison.",
        {404: "no comparison with this id", 422: BAD_PATH},
        params={"comparison_id": COMPARISON_ID},
    ),
    ("get", "/comparisons/{comparison_id}/report"): Operation(
        "A stored comparison's HTML report",
        "The comparison report of a stored comparison: the URL to send a budget owner.",
        {404: "no comparison with this id", 422: BAD_PATH},
        params={"comparison_id": COMPARISON_ID},
        html=True,
    ),
    # -- prices ---------------------------------------------------------------------------------
    ("get", "/prices/snapshots"): Operation(
        "List price snapshots",
        "Newest first: when each was taken, from what source, how many quotes, PENDING "
        "prices and rejected items.",
        {422: BAD_PAGE},
        params=PAGE_QUERY,
    ),
    ("post", "/prices/snapshots"): Operation(
        "Take a price snapshot",
        "From an uploaded saved Price List file (`saved_price_list`: a GetProducts response, "
        "a list of its items or a bulk offer file; basis `saved_file`), or, with no file, live "
        "from the AWS Price List API where the deployment allows it (basis `official`). The "
        "snapshot is immutable and usable by its `snapshot_id`. A live one becomes the latest "
        "(estimates that follow the latest refresh); an upload only with `publish: true` on a "
        "stage that accepts uploads (`prices.accept_uploads`), so a supplied file never "
        "replaces official prices by itself.",
        {
            409: "a live snapshot where live prices are off (`live_prices_off`: upload a file), "
            "or an upload asking to `publish` on a stage that takes none as the latest "
            "(`publish_refused`: nothing stored)",
            422: "a `saved_price_list` that is not a Price List file (the reason named)",
            503: "the Price List API still throttling or failing after retries",
        },
        example={"note": "the daily snapshot, taken now"},
        created="the snapshot, taken",
    ),
    ("get", "/prices/snapshots/latest"): Operation(
        "Read the latest price snapshot",
        "Every quote of the latest snapshot with its SKU, rate code and effective date, the "
        "PENDING prices with their reasons, and the Price List items it rejected.",
        {404: "no price snapshot yet"},
    ),
    ("get", "/prices/snapshots/{snapshot_id}"): Operation(
        "Read a price snapshot",
        "One snapshot, quote by quote.",
        {404: "no snapshot with this id", 422: BAD_PATH},
        params={"snapshot_id": SNAPSHOT_ID},
    ),
    ("get", "/prices/snapshots/{snapshot_id}/diff/{other_id}"): Operation(
        "Compare two price snapshots",
        "The prices added, removed and changed from `snapshot_id` to `other_id`.",
        {404: "either snapshot does not exist", 422: BAD_PATH},
        params={"snapshot_id": SNAPSHOT_ID, "other_id": SNAPSHOT_ID},
    ),
    # -- trial plans ----------------------------------------------------------------------------
    ("post", "/workloads/{workload_id}/trial-plans"): Operation(
        "Start a trial plan",
        "Fit → baseline → target runs of each candidate on the Step Functions workflow, each "
        "phase behind its gate, within `budget_cap_usd`; each run's trial is recorded and the "
        "workload's estimates refresh. `plan_id` defaults to a hash of the request: the same "
        "request is the same plan (200, nothing new started).",
        {
            404: "no workload with this id",
            409: "this `plan_id` exists with a different plan",
            422: "a field invalid, a launcher without what it needs, a plan above the stage's "
            "bounds (`trial_plans` in cdk.json), or a candidate outside the stage's region "
            "(`candidates.<i>.region`: a plan launches where trncost is deployed)",
            503: "Step Functions did not start it (the plan is stored `not_started`; submit it "
            "again), or no state machine is configured",
        },
        example=TRIAL_PLAN,
        params=_wl(),
        created="the plan, stored and started",
        repeat="the same plan was submitted before: nothing new started",
    ),
    ("get", "/trial-plans/{plan_id}"): Operation(
        "Read a trial plan",
        "Each phase's status and trial ids, the gates' results, the spend so far, and the "
        "execution's status as Step Functions says.",
        {404: "no trial plan with this id", 422: BAD_PATH},
        params={"plan_id": TRIAL_PLAN["plan_id"]},
    ),
}


def all_operations() -> dict[tuple[str, str], Operation]:
    """OPERATIONS, with those route modules document beside their routes (same form)."""
    from trncost.api import actuals

    return {**OPERATIONS, **actuals.OPERATIONS}


def complete(document: dict[str, Any], body_errors: dict[int, str]) -> dict[str, Any]:
    """The generated `document`, completed as the module says (a new dict)."""
    documented = all_operations()
    doc = copy.deepcopy(document)
    seen = set()
    for path, operations in doc.get("paths", {}).items():
        for method, operation in operations.items():
            key = (method, path)
            if key not in documented:
                raise KeyError(f"{method.upper()} {path}: not documented in trncost.api.docs")
            seen.add(key)
            _document(operation, documented[key], body_errors)
    stale = sorted(set(documented) - seen)
    if stale:
        raise KeyError(f"trncost.api.docs documents operations that do not exist: {stale}")
    schemas = doc.get("components", {}).get("schemas", {})
    for name in POWERTOOLS_ERROR_SCHEMAS:
        schemas.pop(name, None)
    return doc


def _document(operation: dict[str, Any], op: Operation, body_errors: dict[int, str]) -> None:
    operation["summary"] = op.summary
    operation["description"] = op.description
    if op.request_content is not None:
        operation["requestBody"] = {"required": True, "content": op.request_content}
    responses: dict[str, Any] = operation.setdefault("responses", {})
    success: dict[str, Any] = responses.pop("200", None) or responses.get("201") or {}
    if op.html:
        success = {
            "description": "an HTML5 page; with ?format=csv|md its line items and input table "
            "as CSV or Markdown",
            "content": REPORT_CONTENT,
        }
    if op.created:
        responses["201"] = {**success, "description": op.created}
        if op.location:
            responses["201"]["headers"] = {
                "Location": {
                    "description": "the path of the stored record",
                    "schema": {"type": "string"},
                }
            }
        if op.repeat:
            responses["200"] = {**success, "description": op.repeat}
    else:
        responses["200"] = success
    for code in [c for c in responses if c.startswith(("4", "5"))]:
        del responses[code]
    errors = dict(op.errors)
    if op.html:  # every report route takes ?format
        errors[422] = "; ".join(x for x in (errors.get(422), REPORT_FORMAT_422) if x)
    if "requestBody" in operation:
        for status, why in body_errors.items():
            errors.setdefault(status, why)
    if op.upstream:
        errors.setdefault(503, UPSTREAM)
    for status in sorted(errors):
        responses[str(status)] = {"description": errors[status], "content": ERROR_CONTENT}
    if op.example is not None and op.request_content is None:
        content = operation["requestBody"]["content"]["application/json"]
        content["example"] = op.example
    for parameter in operation.get("parameters", []):
        if parameter["name"] in op.params:
            parameter["example"] = op.params[parameter["name"]]
