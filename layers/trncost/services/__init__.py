"""Services: one module per use case, called by the thin Lambda handlers, the API routes, the
local runtime and the CLI (`trncost.wiring` builds them from the settings; the CLI and the
local runtime are the client side, `trncost_client`, which this package never imports).
They join the pure engine (`trncost.estimate`, `trncost.workflow`) to the adapters
(`trncost.store`, the Price List client, the metric readers, the launchers, the bus), and
raise `trncost.errors`.

    estimates     create an estimate, read its versions and report, refresh it
    snapshots     take a price snapshot (live or from a saved file), read and diff them
    ingest        a finished job's event → one trial record (+ the collector on AWS)
    trials        workloads and their trial records
    trial_logs    a trial imported from its own training logs (API and CLI)
    comparisons   several candidates on one workload: ranked, ranged, decided
    trial_plans   submit a trial plan (Step Functions) and read it back
    trial_steps   what each Task state of a trial plan's execution does

The types a service takes and returns are the domain's (trncost.model: requests, records,
plans), so a caller never needs the store, and a service never re-exports a store's types.
"""
