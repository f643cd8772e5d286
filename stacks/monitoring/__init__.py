"""Monitoring: alarms as code, the alarm topic and the stage's CloudWatch dashboard.

every function ─ Errors, Throttles ──────────┐
every dead-letter queue ─ messages visible ──┤
API stage ─ 5XXError, Latency p99 ───────────┼─► alarm ─► SNS topic (KMS, TLS only) ─► e-mail
trncost/PriceSnapshotTaken ─ none in 2 days ─┤                                  (alarm_email)
trncost/TrialPlansFailed ────────────────────┘
dashboard trncost-<stage>: API, functions, queues and DLQs, trncost metrics, table

- `resources`: what the stage has (`monitored_resources(stage.stacks)` finds every Lambda
  function and SQS queue, nothing is listed by hand), and the DLQ outputs;
- `metrics`: the periods, the Powertools `service` dimension, trncost's own metrics;
- `topic`: the SNS topic every alarm notifies;
- `alarms`: one construct per alarm family (API, functions, dead-letter queues, price
  snapshots, trial plans);
- `dashboard`: the dashboard;
- `stack`: `TrncostMonitoring`, which wires them.

A function or queue added to any stack gets its alarms, dashboard lines and outputs on the next
synth. Metric names come from trncost.observability, the definitions the handlers emit with.
"""
