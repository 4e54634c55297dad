"""Validate JSON bodies against HubSpot's official OpenAPI specs (fixtures/hubspot-openapi)."""

from __future__ import annotations

import copy
import json
import re
import uuid
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft4Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

SPEC_DIR = Path(__file__).resolve().parents[3] / "fixtures" / "hubspot-openapi"
_DATE_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")

_formats = FormatChecker()


@_formats.checks("date-time")
def _is_date_time(value: object) -> bool:
    return not isinstance(value, str) or bool(_DATE_TIME.match(value))


@_formats.checks("uuid", raises=ValueError)
def _is_uuid(value: object) -> bool:
    if isinstance(value, str):
        uuid.UUID(value)
    return True


@_formats.checks("int32")
def _is_int32(value: object) -> bool:
    return not isinstance(value, int) or -(2**31) <= value < 2**31


@_formats.checks("int64")
def _is_int64(value: object) -> bool:
    return not isinstance(value, int) or -(2**63) <= value < 2**63


@cache
def load_spec(name: str) -> dict[str, Any]:
    """A spec file with the two documented defects of the HubDB spec patched in memory."""
    spec: dict[str, Any] = json.loads((SPEC_DIR / name).read_text())
    spec = copy.deepcopy(spec)
    schemas = spec["components"]["schemas"]
    if "HubDbTableRowV3" in schemas:
        # The row list schemas refer to a wrapper the file never defines; rows are HubDbTableRowV3.
        schemas.setdefault(
            "HubDbTableRowV3Wrapper", {"$ref": "#/components/schemas/HubDbTableRowV3"}
        )
        # The API returns each column's plain value, not an object.
        schemas["HubDbTableRowV3"]["properties"]["values"]["additionalProperties"] = {}
    return spec


def response_schema(
    spec_name: str, template: str, status: int, method: str = "get"
) -> dict[str, Any]:
    """The schema the spec declares for `method` `template` answering `status` (or
    `default`)."""
    spec = load_spec(spec_name)
    responses = spec["paths"][template][method]["responses"]
    response = responses.get(str(status)) or responses["default"]
    if "$ref" in response:
        response = spec["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
    (media,) = response["content"].values()
    schema: dict[str, Any] = media["schema"]
    return schema


def validate(spec_name: str, template: str, status: int, body: Any, method: str = "get") -> None:
    """Raise jsonschema.ValidationError when `body` does not match the spec's response."""
    uri = f"urn:hubspot:{spec_name}"
    registry: Registry[Any] = Registry().with_resource(
        uri, Resource.from_contents(load_spec(spec_name), default_specification=DRAFT4)
    )
    schema = response_schema(spec_name, template, status, method)
    ref = schema["$ref"]
    validator = Draft4Validator({"$ref": uri + ref}, registry=registry, format_checker=_formats)
    validator.validate(body)


@cache
def _sparse_spec(name: str) -> dict[str, Any]:
    """The spec for checking request bodies: its `required` lists dropped (every property is
    `required` in these files, a code-generation artefact, while updates are sparse) and HubDB
    cells typed as any JSON value (as the API takes them)."""
    spec = copy.deepcopy(load_spec(name))

    def strip(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("required"), list):
                del node["required"]
            for value in node.values():
                strip(value)
        elif isinstance(node, list):
            for value in node:
                strip(value)

    strip(spec["components"]["schemas"])
    for schema_name in ("HubDbTableRowV3Request", "HubDbTableRowV3BatchUpdateRequest"):
        schema = spec["components"]["schemas"].get(schema_name)
        if schema is not None:
            schema["properties"]["values"]["additionalProperties"] = {}
    return spec


def validate_request(spec_name: str, template: str, body: Any, method: str) -> None:
    """Raise jsonschema.ValidationError when `body` is not a request body the spec declares for
    `method` `template` (sparse: no property is required)."""
    spec = _sparse_spec(spec_name)
    (media,) = spec["paths"][template][method]["requestBody"]["content"].values()
    uri = f"urn:hubspot:sparse:{spec_name}"
    registry: Registry[Any] = Registry().with_resource(
        uri, Resource.from_contents(spec, default_specification=DRAFT4)
    )
    ref = media["schema"]["$ref"]
    validator = Draft4Validator({"$ref": uri + ref}, registry=registry, format_checker=_formats)
    validator.validate(body)
