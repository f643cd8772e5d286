"""A figure read from the trials, with the input-table row that holds it, and the helpers that
say where it came from (measured by which trials, or not measured)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from trncost.model.provenance import Pending, TrialMeasurement, measured
from trncost.model.trial import TrialRun

V = TypeVar("V", bound=float | None, covariant=True)


@dataclass(frozen=True)
class Measured(Generic[V]):
    """A value and the input-table row that holds it.

    `Measured[float]` always holds a value; `Measured[float | None]` may be not measured (None).
    """

    value: V
    row_id: str


MaybeMeasured = Measured[float | None]


def measured_values(
    trials: Iterable[TrialRun], get: Callable[[TrialRun], float | None]
) -> list[float]:
    """What `get` reads from each of `trials`, skipping the trials where it was not measured.

    Returns
    -------
    list[float]
        The values, in trial order [unit of the figure].
    """
    return [v for t in trials if (v := get(t)) is not None]


def measurement(trials: Sequence[TrialRun], metric: str) -> TrialMeasurement:
    """The provenance of a figure read from `trials`: their ids, the `metric` (how it was
    computed from them, e.g. "Σ restart seconds / Σ failures"), code versions and datasets.

    Returns
    -------
    TrialMeasurement
    """
    return measured(
        [t.trial_id for t in trials],
        metric,
        sorted({t.code_version for t in trials}),
        sorted({t.dataset_id for t in trials}),
    )


def not_measured(metric: str) -> Pending:
    """The provenance of a figure no trial measured: pending, saying that `metric` was not
    measured in any trial of the candidate.

    Returns
    -------
    Pending
    """
    return Pending(reason=f"{metric} not measured in any trial of this candidate")
