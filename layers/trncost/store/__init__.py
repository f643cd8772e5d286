"""DynamoDB adapter: the table schema (single source for CDK, the local runtime and tests) and
the repositories (records, prices, ingest claims, trial plans). boto3 lives here and in the
other adapters, not in the engine; the table resource comes from `trncost.aws`."""
