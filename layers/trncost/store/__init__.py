"""DynamoDB adapter: the table schema (single source for CDK, the local runtime and tests)
and the repositories. boto3 lives here, not in the engine."""
