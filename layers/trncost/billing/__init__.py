"""What AWS billed, read for trncost: FOCUS 1.2 and CUR 2.0 exports (CSV, gzip CSV, Parquet),
Cost Explorer grouped by tag, and AWS Budgets.

    tags.py           the spellings a trncost tag key takes in billing data, and matching
    rows.py           FOCUS 1.2 and CUR 2.0 rows → one estimate's summed lines (pure)
    files.py          reading a file: CSV streamed (stdlib csv), gzip, Parquet (DuckDB)
    cost_explorer.py  GetCostAndUsage by the estimate tag (adapter) and its answer (pure)
    budgets.py        CreateBudget from an estimate (adapter) and its request (pure)

Only files.py reads files and only the two adapters call AWS (clients from trncost.aws); the
rest is pure. Which estimate line a billed charge answers is the engine's
(trncost.estimate.usage_types, trncost.estimate.actuals).
"""
