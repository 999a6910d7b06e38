"""docs/protocol.md documents every route, operation and error code the socket has, each route
with an example; a route added without docs fails here."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.conftest import REPO
from vaultmem.api.client import ERRORS
from vaultmem.api.ops import Api
from vaultmem.api.schemas import openapi_document
from vaultmem.api.server import HTTP_CODES

DOCS = REPO / "docs" / "protocol.md"
FENCE = re.compile(r"```(\w*)\n(.*?)```", re.S)


def routes_section(text: str) -> str:
    start = text.index("\n## Routes\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end == -1 else text[start:end]


def route_sections(text: str) -> dict[str, str]:
    """`METHOD /v1/...` heading → the text under it."""
    parts = re.split(r"^### ", routes_section(text), flags=re.M)[1:]
    return {part.split("\n", 1)[0].strip(): part for part in parts}


def documented_problems(document: dict[str, Any], text: str) -> list[str]:
    """What the docs miss: each route needs a `### METHOD path` section naming its operation,
    with a request example and a JSON example."""
    sections = route_sections(text)
    problems = []
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            title = f"{method.upper()} {path}"
            section = sections.get(title)
            if section is None:
                problems.append(f"{title}: no section")
                continue
            blocks = FENCE.findall(section)
            if not any(lang == "json" for lang, _ in blocks):
                problems.append(f"{title}: no JSON example")
            if not any(lang == "sh" and path.split("{")[0] in body for lang, body in blocks):
                problems.append(f"{title}: no request example")
            if operation["operationId"] != "openapi" and f"`{operation['operationId']}`" \
                    not in section:
                problems.append(f"{title}: operation `{operation['operationId']}` not named")
    return problems


def test_every_route_is_documented_with_examples() -> None:
    assert documented_problems(openapi_document(), DOCS.read_text(encoding="utf-8")) == []


def test_a_route_without_docs_is_caught() -> None:
    document = openapi_document()
    document["paths"]["/v1/forget-everything"] = {"post": {"operationId": "forget_everything"}}
    problems = documented_problems(document, DOCS.read_text(encoding="utf-8"))
    assert problems == ["POST /v1/forget-everything: no section"]


def test_no_section_documents_a_route_that_does_not_exist() -> None:
    document = openapi_document()
    served = {f"{m.upper()} {p}" for p, methods in document["paths"].items() for m in methods}
    assert set(route_sections(DOCS.read_text(encoding="utf-8"))) == served


def test_every_operation_is_documented() -> None:
    routes = routes_section(DOCS.read_text(encoding="utf-8"))
    assert [op for op in Api.OPERATIONS if f"Operation `{op}`" not in routes] == []


def test_every_error_code_is_documented() -> None:
    routes = routes_section(DOCS.read_text(encoding="utf-8"))
    codes = set(ERRORS) | set(HTTP_CODES.values()) | {"http_error"}
    assert sorted(code for code in codes if f"`{code}`" not in routes) == []


def test_json_examples_parse() -> None:
    for lang, body in FENCE.findall(routes_section(DOCS.read_text(encoding="utf-8"))):
        if lang == "json":
            assert isinstance(json.loads(body), dict), body[:80]
