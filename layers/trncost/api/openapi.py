"""The OpenAPI document: generated from the routes by Powertools, its schemas named once each,
completed by trncost.api.docs (summaries, descriptions, examples, the real status codes and
the one error schema).

`python -m trncost.api.openapi FILE` writes it (`make openapi` writes `SPEC_FILE`,
`trncost/api/openapi.json`, which the repository's `openapi.json` links to). That file is the
one copy: the layer ships it with the package and the API serves it as it is, at
/openapi.json and in Swagger UI at /docs. A test fails when it is not this output.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from trncost import __version__, safejson
from trncost.api import docs
from trncost.api.app import MAX_BODY_BYTES, SPEC_FILE, routed_app
from trncost.api.bodies import ErrorBody

__all__ = ["SPEC_FILE", "document", "main", "render"]

TITLE = "trncost"
DESCRIPTION = (
    "What it costs to reach a training target on AWS Trainium3 (and the alternatives), from "
    "your own trials and official AWS prices, every number traceable."
)
# What the Lambda entry answers before any route runs, on every operation with a body.
BODY_ERRORS = {
    400: "the body is not JSON trncost parses safely: not UTF-8 (or base64), malformed, nested"
    f" deeper than {safejson.MAX_JSON_DEPTH} levels, or an integer of more than"
    f" {safejson.MAX_INTEGER_DIGITS} digits",
    413: f"the body is larger than {MAX_BODY_BYTES} bytes",
    415: "a POST whose content-type is not application/json",
}
SCHEMA_REF = "#/components/schemas/"


def document() -> dict[str, Any]:
    """The OpenAPI document: generated from the routes, one schema per model, named by its
    title, completed by trncost.api.docs."""
    generated: dict[str, Any] = json.loads(
        routed_app().get_openapi_json_schema(
            title=TITLE, version=__version__, description=DESCRIPTION
        )
    )
    schemas = generated.setdefault("components", {}).setdefault("schemas", {})
    schemas["ErrorBody"] = ErrorBody.model_json_schema()
    one_schema_per_model(generated)
    name_schemas_by_title(generated)
    return docs.complete(generated, BODY_ERRORS)


_TWIN = re.compile(r"^(?P<model>.+)-(?P<mode>Input|Output)$")


def one_schema_per_model(doc: dict[str, Any]) -> None:
    """One schema per model, in place. pydantic names a model used both in a request and in an
    answer twice when the two forms differ, `X-Input` (what validates) and `X-Output` (what
    it serializes to: a Decimal as a string only); Powertools (3.37) has no option for
    pydantic's `separate_input_output_schemas=False`. Each pair becomes `X`, its validation
    form, as that option makes it: what the API accepts, and what it answers validates
    against it too (a Decimal answered as a string is one of the forms it accepts;
    tests/integration/test_openapi_examples.py checks every answer against the document)."""
    schemas: dict[str, Any] = doc.get("components", {}).get("schemas", {})
    renames: dict[str, str] = {}
    for name in schemas:
        twin = _TWIN.match(name)
        if twin is None or twin["mode"] != "Input":
            continue
        model = twin["model"]
        if f"{model}-Output" in schemas and model not in schemas:
            renames[name] = renames[f"{model}-Output"] = model
    if renames:
        doc["components"]["schemas"] = {
            renames.get(name, name): schema
            for name, schema in schemas.items()
            if not (name in renames and name.endswith("-Output"))
        }
        _rename_refs(doc, renames)


_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")


def name_schemas_by_title(doc: dict[str, Any]) -> None:
    """Name each component schema by its title where pydantic's name is not one a person can
    read (a generic's parameters spelled out: `Page_Workload_` → `WorkloadPage`), when that
    title is free; in place."""
    schemas: dict[str, Any] = doc.get("components", {}).get("schemas", {})
    renames: dict[str, str] = {}
    taken = set(schemas)
    for name, schema in schemas.items():
        title = schema.get("title") if isinstance(schema, dict) else None
        if not isinstance(title, str) or not _IDENTIFIER.match(title):
            continue
        if not _IDENTIFIER.match(name) and title not in taken:
            renames[name] = title
            taken.add(title)
    if renames:
        doc["components"]["schemas"] = {renames.get(k, k): v for k, v in schemas.items()}
        _rename_refs(doc, renames)


def _rename_refs(doc: dict[str, Any], renames: dict[str, str]) -> None:
    refs = {SCHEMA_REF + old: SCHEMA_REF + new for old, new in renames.items()}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref in refs:
                node["$ref"] = refs[ref]
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)


def render() -> str:
    """The document as it is checked in: sorted keys, two-space indent, a final newline."""
    return json.dumps(document(), indent=2, sort_keys=True) + "\n"


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
