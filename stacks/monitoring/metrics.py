"""The metrics the alarms and the dashboard share: periods, the Powertools dimension, and
trncost's own metrics (EMF, trncost.observability, the definitions the handlers emit with)."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cloudwatch

from trncost.observability import NAMESPACE, MetricName

FIVE_MINUTES = cdk.Duration.minutes(5)
ONE_DAY = cdk.Duration.days(1)
# Powertools EMF puts every metric under one dimension, `service`, whose value is the
# function's POWERTOOLS_SERVICE_NAME (TrncostFunction.service_name; the factory sets it to the
# lambdas/<name> folder). An alarm must name exactly that dimension set to see the metric.
SERVICE_DIMENSION = "service"
# The trial_steps function (lambdas/trial_steps) emits MetricName.trial_plans_failed with
# Powertools, Count 1 per plan that ends failed (and trial_plans_succeeded per completed plan);
# the alarm (alarms.TrialPlanAlarms) watches for it under this service.
TRIAL_PLANS_SERVICE = "trial_steps"


def own_metric(
    name: MetricName, *, service: str, period: cdk.Duration, label: str
) -> cloudwatch.Metric:
    """A trncost metric of one service (the Sum over `period`)."""
    return cloudwatch.Metric(
        namespace=NAMESPACE,
        metric_name=name.value,
        dimensions_map={SERVICE_DIMENSION: service},
        statistic="Sum",
        period=period,
        label=label,
    )


def emitted(
    name: MetricName, period: cdk.Duration = FIVE_MINUTES, statistic: str = "Sum"
) -> cloudwatch.MathExpression:
    """A trncost metric of every service that emits it (Powertools: one `service` dimension),
    one line each."""
    seconds = int(period.to_seconds())
    return cloudwatch.MathExpression(
        expression=(
            f"SEARCH('{{{NAMESPACE},{SERVICE_DIMENSION}}} MetricName=\"{name.value}\"',"
            f" '{statistic}', {seconds})"
        ),
        label=f"{name.value} ${{PROP('Dim.{SERVICE_DIMENSION}')}}",
        period=period,
    )
