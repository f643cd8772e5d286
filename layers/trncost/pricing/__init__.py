"""Price List adapters: the boto3 client (Price List Query API, EC2 Capacity Blocks), the pure
parser of Price List items, the catalog of what to query, and the quote builders. Taking a
snapshot (the use case) is `trncost.services.snapshots`."""
