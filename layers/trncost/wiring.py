"""Builds the services from `Settings`, for the Lambdas and the local runtime alike (the CLI's
`serve` runs the latter; its `dlq` commands need no settings, and their module is not in the
Lambda layer, so they build their queue operations themselves).

One `Wiring` is one process's worth of adapters and services (a Lambda sandbox, the local
runtime). Everything is built on first use and kept: the settings are read from
the environment only when something needs them, a boto3 client is made only when a service
first calls AWS, and each service module is imported only when that service is asked for — a
Lambda imports what it uses and no more. Tests inject by passing settings or by assigning any
part before it is first used:

    services = Wiring(Settings(table_name=table))
    services.collector = FakeCollector()       # the ingest service will use it
    services.ingest.ingest(event)

Each Lambda handler module holds its own `Wiring()` (a fresh sandbox: a fresh wiring); the API
routes reach the wiring of the request they answer through `trncost.api.context`.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from trncost.settings import Settings, TrialStepSettings

if TYPE_CHECKING:
    from trncost.bus import EventPublisher
    from trncost.pricing.client import PriceListClient
    from trncost.pricing.names import KnownNames
    from trncost.services.actuals import ActualsService
    from trncost.services.capacity import CapacityService
    from trncost.services.comparisons import ComparisonService
    from trncost.services.estimates import EstimateService
    from trncost.services.ingest import AwsCollector, IngestService
    from trncost.services.job_log_stream import JobLogStreamService
    from trncost.services.outbox import Outbox
    from trncost.services.readiness import ReadinessWatch
    from trncost.services.snapshots import SnapshotService
    from trncost.services.trial_logs import LogImportService
    from trncost.services.trial_plans import TrialPlanService
    from trncost.services.trial_steps import TrialSteps
    from trncost.services.trials import TrialService
    from trncost.store.actuals import ActualsStore
    from trncost.store.capacity import CapacityStore
    from trncost.store.comparisons import ComparisonStore
    from trncost.store.idempotency import IdempotencyStore
    from trncost.store.ingest import IngestStore
    from trncost.store.joblogs import JobLogStore
    from trncost.store.plans import PlanStore
    from trncost.store.prices import PriceStore
    from trncost.store.records import RecordStore


class Wiring:
    def __init__(self, settings: Settings | None = None) -> None:
        if settings is not None:
            self.settings = settings

    @cached_property
    def settings(self) -> Settings:
        return Settings.from_env()

    # -- adapters ---------------------------------------------------------------------------
    @cached_property
    def records(self) -> RecordStore:
        from trncost.store.records import RecordStore

        return RecordStore(self.settings.table_name)

    @cached_property
    def prices(self) -> PriceStore:
        from trncost.store.prices import PriceStore

        return PriceStore(self.settings.table_name)

    @cached_property
    def claims(self) -> IngestStore:
        from trncost.store.ingest import IngestStore

        return IngestStore(self.settings.table_name)

    @cached_property
    def comparison_store(self) -> ComparisonStore:
        from trncost.store.comparisons import ComparisonStore

        return ComparisonStore(self.settings.table_name)

    @cached_property
    def plans(self) -> PlanStore:
        from trncost.store.plans import PlanStore

        return PlanStore(self.settings.table_name)

    @cached_property
    def actuals_store(self) -> ActualsStore:
        from trncost.store.actuals import ActualsStore

        return ActualsStore(self.settings.table_name)

    @cached_property
    def idempotency(self) -> IdempotencyStore:
        """The API's Idempotency-Key records (trncost.api.idempotency)."""
        from trncost.store.idempotency import IdempotencyStore

        return IdempotencyStore(self.settings.table_name)

    @cached_property
    def publisher(self) -> EventPublisher | None:
        """trncost's own events, on the stage's bus (None: no bus configured)."""
        from trncost.bus import EventPublisher

        name = self.settings.bus_name
        return EventPublisher(name) if name else None

    @cached_property
    def price_list(self) -> PriceListClient:
        from trncost.pricing.client import PriceListClient

        return PriceListClient(self.settings.price_list_region)

    @cached_property
    def job_log_store(self) -> JobLogStore:
        from trncost.store.joblogs import JobLogStore

        return JobLogStore(self.settings.table_name)

    @cached_property
    def collector(self) -> AwsCollector:
        from trncost.metrics.joblogs import JobLogsReader
        from trncost.services.ingest import AwsCollector

        store = self.job_log_store
        # a job's logs: the subscription's parts when it left some, else GetLogEvents
        return AwsCollector(job_logs=lambda region: JobLogsReader(region, parts=store))

    @cached_property
    def job_log_stream(self) -> JobLogStreamService:
        from trncost.services.job_log_stream import JobLogStreamService

        return JobLogStreamService(self.job_log_store)

    @cached_property
    def trial_step_settings(self) -> TrialStepSettings:
        return TrialStepSettings.from_env()

    # -- services ---------------------------------------------------------------------------
    @cached_property
    def names(self) -> KnownNames:
        """botocore's instance types and regions, plus the stage catalog's (read lazily)."""
        from trncost.pricing.names import for_catalog

        return for_catalog(self.settings.catalog)

    @cached_property
    def estimates(self) -> EstimateService:
        from trncost.services.estimates import EstimateService

        return EstimateService(
            self.records,
            self.prices,
            names=self.names,
            # the report's "Estimate vs actual" section, read when a report is rendered
            actuals=lambda estimate_id: self.actuals.comparison_or_none(estimate_id),
            # its "Capacity you can book" section: the offerings last quoted for the version
            capacity=lambda estimate_id, version: self.capacity_store.get(estimate_id, version),
            publisher=self.publisher,  # "Estimate Decision Changed"
        )

    @cached_property
    def capacity_store(self) -> CapacityStore:
        from trncost.store.capacity import CapacityStore

        return CapacityStore(self.settings.table_name)

    @cached_property
    def capacity(self) -> CapacityService:
        """Capacity Blocks and Training Plans for an estimate (asks EC2 and SageMaker)."""
        from trncost.pricing.client import CapacityBlockClient, TrainingPlanClient
        from trncost.services.capacity import CapacityService

        return CapacityService(
            self.estimates, self.capacity_store, CapacityBlockClient, TrainingPlanClient
        )

    @cached_property
    def readiness(self) -> ReadinessWatch:
        """The Trainium3 readiness watch the prices job runs after each published snapshot."""
        from trncost.services.readiness import ReadinessWatch
        from trncost.store.readiness import WatchStore

        return ReadinessWatch(
            self.estimates, WatchStore(self.settings.table_name), self.settings.catalog
        )

    @cached_property
    def actuals(self) -> ActualsService:
        from trncost.billing.budgets import Budgets
        from trncost.billing.cost_explorer import CostExplorer
        from trncost.metrics.sagemaker import TrainingJobReader
        from trncost.services.actuals import ActualsService

        return ActualsService(
            self.actuals_store,
            self.records,
            lambda: self.estimates,  # made on first use (the ingest seldom needs it)
            publisher=self.publisher,
            cost_explorer=CostExplorer,
            budgets=Budgets,
            sagemaker=TrainingJobReader,
            account_id=self.settings.account_id,
        )

    @cached_property
    def trials(self) -> TrialService:
        from trncost.services.trials import TrialService

        # every trial record is written and announced ("Trial Recorded") through it
        return TrialService(self.records, names=self.names, outbox=self.outbox)

    @cached_property
    def log_imports(self) -> LogImportService:
        from trncost.services.trial_logs import LogImportService

        return LogImportService(self.trials)

    @cached_property
    def comparisons(self) -> ComparisonService:
        from trncost.services.comparisons import ComparisonService

        return ComparisonService(
            self.trials, self.estimates, names=self.names, store=self.comparison_store
        )

    @cached_property
    def snapshots(self) -> SnapshotService:
        from trncost.services.snapshots import SnapshotService

        settings = self.settings
        return SnapshotService(
            store=self.prices,
            price_list=self.price_list,
            publisher=self.publisher,
            catalog=settings.catalog,
            live_prices=settings.live_prices,
            accept_uploads=settings.accept_uploads,
        )

    @cached_property
    def outbox(self) -> Outbox | None:
        """Events written with their records, until EventBridge takes them (None: no bus)."""
        from trncost.services.outbox import Outbox

        return Outbox.beside(self.records, self.publisher)

    @cached_property
    def ingest(self) -> IngestService:
        from trncost.services.ingest import IngestService

        return IngestService(
            records=self.records,
            claims=self.claims,
            collector=self.collector,
            publisher=self.publisher,
            trials=self.trials,
            # a SageMaker job tagged with an estimate: its same-day actual
            actuals=self.actuals,
        )

    @cached_property
    def trial_plans(self) -> TrialPlanService:
        from trncost.services.trial_plans import TrialPlanService

        # its Step Functions client is made when a plan is first started or described
        settings = self.settings
        return TrialPlanService(
            self.plans,
            self.records,
            state_machine_arn=settings.state_machine_arn,
            limits=settings.plan_limits,
            default_launcher=settings.default_launcher,
            local_runs=settings.local_runs,
            region=settings.region,
        )

    @cached_property
    def trial_steps(self) -> TrialSteps:
        from trncost.launch.adapters import Launchers
        from trncost.services.trial_steps import TrialSteps, price_lookup_from

        return TrialSteps(
            plans=self.plans,
            records=self.records,
            launchers=Launchers(self.settings.local_runs),
            prices=price_lookup_from(self.prices.latest),
            defaults=self.trial_step_settings,
        )
