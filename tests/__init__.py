"""trncost's tests, a package: `support/` (shared helpers and fixtures), `unit/`,
`integration/`, `infra/`, `e2e/`, `reliability/`, and `events/` (real-format samples)."""
