"""The HTTP API (Powertools APIGatewayRestResolver): routes over the services, errors mapped to
status codes in one place. `app` is the resolver and the Lambda entry."""
