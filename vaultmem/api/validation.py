"""Request bodies: parsing, query strings, and validation against the ops' schemas.

`validate_body(op, body)` checks a body against its schema in `schemas.py` before anything
runs, so bad input changes nothing; the errors say which field is wrong and why.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs

from vaultmem.api.schemas import REQUESTS, Schema
from vaultmem.core.json_types import JSON
from vaultmem.errors import InvalidInput


def parse_body(raw: bytes) -> JSON:
    """A request body: a JSON object in UTF-8 (no NaN/Infinity, bounded nesting)."""
    try:
        value = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        reason = "too deeply nested" if isinstance(exc, RecursionError) else str(exc)
        raise InvalidInput(f"the request body is not valid JSON ({reason})") from None
    if not isinstance(value, dict):
        raise InvalidInput("the request body must be a JSON object")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def query_body(op: str, query: str) -> JSON:
    """Query parameters as a body, numbers and booleans converted by the op's schema (the
    result is validated like any body)."""
    try:
        pairs = parse_qs(query, keep_blank_values=True, strict_parsing=True, max_num_fields=20,
                         errors="strict")
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"the query string does not parse ({exc})") from None
    properties: Mapping[str, Any] = REQUESTS[op]["properties"]
    body: JSON = {}
    for name, values in pairs.items():
        if len(values) > 1:
            raise InvalidInput(f"give {name} once")
        body[name] = _convert(values[0], properties.get(name, {}).get("type"))
    return body


def _convert(text: str, kind: Any) -> Any:
    if kind == "integer" and re.fullmatch(r"-?[0-9]{1,15}", text):
        return int(text)
    if kind == "boolean" and text.lower() in ("true", "1", "yes", "false", "0", "no"):
        return text.lower() in ("true", "1", "yes")
    return text


# validation -----------------------------------------------------------------------------------

_TYPE_NAMES = {"string": "a string", "integer": "an integer", "number": "a number",
               "boolean": "true or false", "array": "a list", "object": "an object",
               "null": "null"}


def validate_body(op: str, body: Mapping[str, Any]) -> JSON:
    """`body` checked against the request schema of `op`, with defaults filled in."""
    if not isinstance(body, Mapping):
        raise InvalidInput(f"{op}: the request body must be a JSON object")
    checked: JSON = validate(REQUESTS[op], body, op)
    return checked


def validate(schema: Schema, value: Any, where: str) -> Any:
    """`value` checked against `schema` (the subset described in schemas.py); returns it with
    integral floats as ints and object defaults filled in. Raises InvalidInput naming the
    offending field and what was expected."""
    types = schema.get("type")
    if types is not None:
        value = _check_type(value, [types] if isinstance(types, str) else types, where)
    if "enum" in schema and value not in schema["enum"]:
        options = ", ".join(str(v) for v in schema["enum"])
        raise InvalidInput(f"{where} must be one of {options} (got {_show(value)})")
    if isinstance(value, str):
        _check_string(schema, value, where)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        _check_range(schema, value, where)
    elif isinstance(value, list):
        value = _check_list(schema, value, where)
    elif isinstance(value, Mapping):
        value = _check_object(schema, value, where)
    return value


def _check_type(value: Any, types: list[str], where: str) -> Any:
    for name in types:
        if name == "integer" and isinstance(value, float) and value.is_integer():
            return int(value)
        if _is_type(value, name):
            return value
    expected = " or ".join(_TYPE_NAMES[name] for name in types)
    raise InvalidInput(f"{where} must be {expected} (got {_json_type(value)})")


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    if isinstance(value, float) and not math.isfinite(value):
        return False
    checks: dict[str, type | tuple[type, ...]] = {
        "string": str, "integer": int, "number": (int, float), "boolean": bool,
        "array": list, "object": Mapping, "null": type(None),
    }
    return isinstance(value, checks[name])


def _check_string(schema: Schema, value: str, where: str) -> None:
    if "\x00" in value:
        raise InvalidInput(f"{where} must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{where} is not valid Unicode text (lone surrogates)") from None
    low, high = schema.get("minLength"), schema.get("maxLength")
    if low is not None and len(value) < low:
        raise InvalidInput(f"{where} must not be empty" if low == 1
                           else f"{where} must be at least {low} characters long")
    if high is not None and len(value) > high:
        raise InvalidInput(f"{where} must be at most {high} characters long (got {len(value)})")


def _check_range(schema: Schema, value: float, where: str) -> None:
    low, high = schema.get("minimum"), schema.get("maximum")
    above = schema.get("exclusiveMinimum")
    if low is not None and high is not None and not low <= value <= high:
        raise InvalidInput(f"{where} must be between {low} and {high} (got {value})")
    if low is not None and value < low:
        raise InvalidInput(f"{where} must be at least {low} (got {value})")
    if high is not None and value > high:
        raise InvalidInput(f"{where} must be at most {high} (got {value})")
    if above is not None and value <= above:
        raise InvalidInput(f"{where} must be greater than {above} (got {value})")


def _check_list(schema: Schema, value: list[Any], where: str) -> list[Any]:
    low, high = schema.get("minItems"), schema.get("maxItems")
    if low is not None and len(value) < low:
        raise InvalidInput(f"{where} must have at least {low} item(s)")
    if high is not None and len(value) > high:
        raise InvalidInput(f"{where} must have at most {high} items (got {len(value)})")
    items = schema.get("items")
    if items is None:
        return value
    return [validate(items, item, f"{where}[{i}]") for i, item in enumerate(value)]


def _check_object(schema: Schema, value: Mapping[str, Any], where: str) -> JSON:
    properties: dict[str, Schema] = schema.get("properties", {})
    if schema.get("additionalProperties", True) is False:
        unknown = sorted(str(k) for k in value if k not in properties)
        if unknown:
            accepted = ", ".join(properties) or "none"
            raise InvalidInput(f"{where}: unknown field(s) {', '.join(unknown)} "
                               f"(accepted: {accepted})")
    missing = [name for name in schema.get("required", ()) if name not in value]
    if missing:
        raise InvalidInput(f"{where}: missing required field(s) {', '.join(missing)}")
    alternatives = schema.get("oneOf")
    if alternatives:
        names = [name for alt in alternatives for name in alt["required"]]
        if sum(all(n in value for n in alt["required"]) for alt in alternatives) != 1:
            raise InvalidInput(f"{where}: give exactly one of {', '.join(names)}")
    checked: JSON = {}
    for key, item in value.items():
        sub = properties.get(key)
        checked[key] = item if sub is None else validate(sub, item, _field(where, key))
    for name, sub in properties.items():
        if name not in checked and "default" in sub:
            default = sub["default"]
            checked[name] = list(default) if isinstance(default, list) else default
    return checked


def _field(where: str, key: str) -> str:
    return key if where in REQUESTS else f"{where}.{key}"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number" if math.isfinite(value) else "a non-finite number"
    for name in ("string", "array", "object"):
        if _is_type(value, name):
            return _TYPE_NAMES[name]
    return type(value).__name__


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
