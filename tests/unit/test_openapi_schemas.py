"""How the OpenAPI document names its schemas (trncost.api.openapi): one schema per model, in
its validation form, where pydantic writes `X-Input` and `X-Output`; a generic's name by its
title; every `$ref` follows. And the checked-in document the API serves holds to it."""

from __future__ import annotations

import json
from typing import Any

from trncost.api.app import SPEC_FILE
from trncost.api.openapi import name_schemas_by_title, one_schema_per_model

REF = "#/components/schemas/"
MONEY_IN = {"anyOf": [{"type": "number", "minimum": 0}, {"type": "string"}]}
MONEY_OUT = {"type": "string"}


def _doc(schemas: dict[str, Any], body: str, answer: str) -> dict[str, Any]:
    """A one-operation document: `body` is the request's schema, `answer` the 200's."""
    return {
        "paths": {
            "/x": {
                "post": {
                    "requestBody": {
                        "content": {"application/json": {"schema": {"$ref": REF + body}}}
                    },
                    "responses": {
                        "200": {"content": {"application/json": {"schema": {"$ref": REF + answer}}}}
                    },
                }
            }
        },
        "components": {"schemas": schemas},
    }


def _object(title: str, **properties: Any) -> dict[str, Any]:
    return {"title": title, "type": "object", "properties": properties}


def test_input_and_output_twins_become_one_schema_in_their_validation_form():
    # Given a request model used in an answer too, with a nested twin and a shared model
    schemas = {
        "Plan-Input": _object("Plan", credits={"$ref": REF + "Credits-Input"}),
        "Plan-Output": _object("Plan", credits={"$ref": REF + "Credits-Output"}),
        "Credits-Input": _object("Credits", amount_usd=MONEY_IN),
        "Credits-Output": _object("Credits", amount_usd=MONEY_OUT),
        "Shared": _object("Shared", note={"type": "string"}),
    }
    doc = _doc(schemas, "Plan-Input", "Plan-Output")
    # When the document gets one schema per model
    one_schema_per_model(doc)
    # Then each pair is one schema, the validation form, and every reference names it
    assert doc["components"]["schemas"] == {
        "Plan": _object("Plan", credits={"$ref": REF + "Credits"}),
        "Credits": _object("Credits", amount_usd=MONEY_IN),
        "Shared": _object("Shared", note={"type": "string"}),
    }
    operation = doc["paths"]["/x"]["post"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert body == answer == {"$ref": REF + "Plan"}
    assert "-Input" not in json.dumps(doc) and "-Output" not in json.dumps(doc)


def test_a_twin_whose_name_is_taken_or_unpaired_is_left_as_it_is():
    # Given twins whose plain name another schema has, and an Input without its Output
    schemas = {
        "Plan": _object("Plan"),
        "Plan-Input": _object("Plan", a=MONEY_IN),
        "Plan-Output": _object("Plan", a=MONEY_OUT),
        "Lone-Input": _object("Lone"),
    }
    doc = _doc(dict(schemas), "Plan-Input", "Plan-Output")
    # When the document gets one schema per model
    one_schema_per_model(doc)
    # Then nothing is renamed: no schema is lost and no reference dangles
    assert doc["components"]["schemas"] == schemas
    assert doc == _doc(schemas, "Plan-Input", "Plan-Output")


def test_a_generic_is_named_by_its_title_when_the_title_is_free():
    # Given pydantic's names of two generic pages, one whose title another schema has
    schemas = {
        "Page_Workload_": _object("WorkloadPage"),
        "Page_Trial_": _object("TrialPage"),
        "TrialPage": _object("TrialPage"),
    }
    doc = _doc(dict(schemas), "Page_Trial_", "Page_Workload_")
    # When schemas are named by their titles
    name_schemas_by_title(doc)
    # Then the free title is the name, the taken one is left, and references follow
    assert set(doc["components"]["schemas"]) == {"WorkloadPage", "Page_Trial_", "TrialPage"}
    answer = doc["paths"]["/x"]["post"]["responses"]["200"]["content"]["application/json"]
    assert answer["schema"] == {"$ref": REF + "WorkloadPage"}


def test_the_served_document_has_one_schema_per_model_and_one_error_schema():
    # Given the checked-in document the API serves at /openapi.json and /docs
    document = json.loads(SPEC_FILE.read_text(encoding="utf-8"))
    schemas = document["components"]["schemas"]
    # Then no model is there twice, under its own name or its title
    assert [n for n in schemas if n.endswith(("-Input", "-Output"))] == []
    titles = [s.get("title") for s in schemas.values() if s.get("title")]
    assert len(titles) == len(set(titles))
    # and every error answer, 4xx and 5xx, is ErrorBody: {error, message, fields}
    assert set(schemas["ErrorBody"]["properties"]) == {"error", "message", "fields"}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for status, response in operation["responses"].items():
                if status[0] in "45":
                    media = response["content"]["application/json"]["schema"]
                    assert media == {"$ref": REF + "ErrorBody"}, (method, path, status)
