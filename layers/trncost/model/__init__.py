"""The domain language of DESIGN.md as pydantic v2 models."""

from trncost.model.assumptions import Assumed, Assumptions, DataPreparation
from trncost.model.candidate import Candidate, Parallelism, Platform, PurchaseOption
from trncost.model.estimate import (
    Component,
    Estimate,
    EstimateInput,
    EstimateWarning,
    InputRow,
    LineItem,
    PendingTerm,
    TimeToTarget,
)
from trncost.model.price import (
    CapacityBlockTerms,
    PriceKey,
    PriceOverride,
    PriceQuote,
    PriceSnapshot,
    PriceTier,
    Service,
    UsageItem,
)
from trncost.model.provenance import (
    Derived,
    OfficialPrice,
    Pending,
    Provenance,
    ProvenanceKind,
    TrialMeasurement,
    UserAssumption,
)
from trncost.model.trial import (
    Checkpointing,
    Phase,
    QualityResult,
    Reliability,
    TimingScope,
    TrialRun,
    TrialStatus,
    Usage,
    Utilization,
    WallTime,
    Work,
)
from trncost.model.workload import ModelSpec, QualityGate, Target, Workload, WorkUnit

__all__ = [
    "Assumed", "Assumptions", "CapacityBlockTerms", "Candidate", "Checkpointing", "Component",
    "DataPreparation", "Derived", "Estimate", "EstimateInput", "EstimateWarning", "InputRow",
    "LineItem", "ModelSpec", "OfficialPrice", "Parallelism", "Pending", "PendingTerm", "Phase",
    "Platform", "PriceKey", "PriceOverride", "PriceQuote", "PriceSnapshot", "PriceTier",
    "Provenance", "ProvenanceKind", "PurchaseOption", "QualityGate", "QualityResult",
    "Reliability", "Service", "Target", "TimeToTarget", "TimingScope", "TrialMeasurement",
    "TrialRun", "TrialStatus", "Usage", "UsageItem", "UserAssumption", "Utilization",
    "WallTime", "Work", "WorkUnit", "Workload",
]
