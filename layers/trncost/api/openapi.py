"""Write the OpenAPI document generated from the routes: `python -m trncost.api.openapi FILE`.
The checked-in `openapi.json` is this output; a test fails when it is stale."""

from __future__ import annotations

import json
import sys

from trncost.api.app import openapi_document


def render() -> str:
    return json.dumps(openapi_document(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if len(argv) > 1:
        with open(argv[1], "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
