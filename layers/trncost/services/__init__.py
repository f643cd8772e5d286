"""Services: one per use case, called by the thin Lambda handlers (and the local runtime).
They wire the pure engine to the adapters (store, metrics, pricing, bus)."""
