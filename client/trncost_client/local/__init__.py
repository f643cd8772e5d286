"""The embedded runtime: trncost on one laptop (moto-backed AWS, the real handlers in-process).
Used by `make run` and the tests; not shipped in the Lambda layer."""
