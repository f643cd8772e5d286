"""The HTTP API (Powertools APIGatewayRestResolver)."""
