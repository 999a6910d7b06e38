"""A safe YAML loader that reads frontmatter the way Obsidian (YAML 1.2) does.

Differences from PyYAML's SafeLoader (YAML 1.1), chosen to match what users see in Obsidian:

* booleans are only ``true``/``false`` (any of the three usual casings); ``yes``, ``no``, ``on``
  and ``off`` stay strings;
* integers are decimal without a leading zero (``0``, ``-12``, ``+7``) or hexadecimal
  (``0x1F``). Leading-zero numbers (``01234``, a postcode) and sexagesimal values (``12:30``)
  stay **strings**; YAML 1.1 would make them 668 and 750;
* floats follow YAML 1.2 (``1.5``, ``.5``, ``1e5``, ``.inf``, ``.nan``), again without a leading
  zero in the integer part; no underscores, no sexagesimal;
* ISO dates and timestamps become ``date``/``datetime`` as in PyYAML; an impossible date such as
  ``2023-02-30`` stays a string instead of failing;
* ``=`` is a plain string; merge keys (``<<``) work;
* unknown local tags (``!foo value``) are ignored: the value is read as if untagged;
* duplicate keys, a non-mapping top level, recursive aliases, nesting deeper than
  ``MAX_DEPTH`` and alias expansion beyond ``MAX_EXPANDED_NODES`` raise FrontmatterError, so a
  "billion laughs" document fails fast instead of eating memory.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Hashable
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from vaultmem.errors import FrontmatterError

MAX_DEPTH = 100
MAX_EXPANDED_NODES = 100_000
# libyaml's composer recurses in C and segfaults on very deep nesting (measured: fine at 20k
# levels, crash at 50k). Texts that might nest this deep go to the pure-Python loader instead,
# whose recursion limit turns into a clean error.
_C_LOADER_DEPTH_BUDGET = 5_000

_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_INT = re.compile(r"^(?:[-+]?(?:0|[1-9][0-9]*)|0x[0-9a-fA-F]+)$")
_EXP = r"[eE][-+]?[0-9]+"
_FLOAT = re.compile(
    rf"^(?:[-+]?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*(?:{_EXP})?|{_EXP})|\.[0-9]+(?:{_EXP})?)"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_BRACKETS = re.compile(r"[\[\]{}]")
_KEPT_FROM_SAFE = ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:merge")


def _resolvers() -> list[tuple[str, re.Pattern[str], list[str] | None]]:
    table: list[tuple[str, re.Pattern[str], list[str] | None]] = [
        ("tag:yaml.org,2002:bool", _BOOL, list("tTfF")),
        ("tag:yaml.org,2002:null", _NULL, ["~", "n", "N", ""]),
        ("tag:yaml.org,2002:int", _INT, list("-+0123456789")),
        ("tag:yaml.org,2002:float", _FLOAT, list("-+.0123456789")),
    ]
    seen: set[str] = set()
    for entries in yaml.SafeLoader.yaml_implicit_resolvers.values():
        for tag, regexp in entries:
            if tag in _KEPT_FROM_SAFE and tag not in seen:
                seen.add(tag)
                table.append((tag, regexp, None))
    return table


def _check_node_graph(root: Node) -> None:
    """Reject cycles, excessive depth and excessive alias expansion (iteratively)."""
    expanded: dict[int, int] = {}
    depth_of: dict[int, int] = {id(root): 1}
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            on_path.discard(key)
            expanded[key] = 1 + sum(expanded[id(c)] for c in _children(node))
            if expanded[key] > MAX_EXPANDED_NODES:
                raise FrontmatterError(
                    f"frontmatter expands to more than {MAX_EXPANDED_NODES} values "
                    "(alias bomb?); not read"
                )
            continue
        if key in expanded:
            continue
        if depth_of[key] > MAX_DEPTH:
            raise FrontmatterError(f"frontmatter nests deeper than {MAX_DEPTH} levels; not read")
        on_path.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in on_path:
                raise FrontmatterError("frontmatter contains a recursive alias; not read")
            if id(child) not in expanded:
                depth_of[id(child)] = max(depth_of.get(id(child), 0), depth_of[key] + 1)
                stack.append((child, False))


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


class _GuardMixin:
    """Shared overrides for the C and the pure-Python loader."""

    def get_single_data(self) -> Any:
        node = self.get_single_node()  # type: ignore[attr-defined]
        if node is None:
            return None
        _check_node_graph(node)
        return self.construct_document(node)  # type: ignore[attr-defined]

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)  # type: ignore[attr-defined]
            if not isinstance(key, Hashable):
                continue  # the base class reports unhashable keys
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        result: dict[Any, Any] = super().construct_mapping(node, deep)  # type: ignore[misc]
        return result


def _construct_timestamp(loader: Any, node: ScalarNode) -> Any:
    try:
        return yaml.SafeLoader.construct_yaml_timestamp(loader, node)
    except ValueError:
        return loader.construct_scalar(node)


def _construct_unknown_tag(loader: Any, _suffix: str, node: Node) -> Any:
    if isinstance(node, ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_mapping(node, deep=True)


def _configure(cls: Any) -> Any:
    cls.yaml_implicit_resolvers = {}
    for tag, regexp, first in _resolvers():
        cls.add_implicit_resolver(tag, regexp, first)
    cls.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)
    cls.add_multi_constructor("!", _construct_unknown_tag)
    return cls


class ObsidianLoader(_GuardMixin, _BASE_LOADER):  # type: ignore[misc]
    """Fast loader (libyaml when available)."""


class ObsidianPyLoader(_GuardMixin, yaml.SafeLoader):
    """Pure-Python loader for texts that could nest too deeply for libyaml."""


_configure(ObsidianLoader)
_configure(ObsidianPyLoader)


def _depth_upper_bound(text: str) -> int:
    """A cheap over-estimate of how deeply `text` can nest."""
    widest = max((len(line) - len(line.lstrip(" -?:\t")) for line in text.split("\n")), default=0)
    return text.count("[") + text.count("{") + 2 * (widest + 1)


def _brackets_deeper_than(text: str, limit: int) -> bool:
    """Whether flow brackets nest deeper than `limit`, quotes ignored (an over-estimate)."""
    depth = 0
    for match in _BRACKETS.finditer(text):
        depth = depth + 1 if match.group() in "[{" else max(depth - 1, 0)
        if depth > limit:
            return True
    return False


def load_yaml(yaml_text: str, *, line_offset: int = 0) -> dict[str, object]:
    """Parse frontmatter YAML; `line_offset` is added to line numbers in error messages."""
    if not yaml_text.strip():
        return {}
    loader: Any = ObsidianLoader
    if _depth_upper_bound(yaml_text) > _C_LOADER_DEPTH_BUDGET:
        # The pure-Python scanner spends seconds on thousands of open brackets before its
        # recursion limit stops it; such a text is refused at once instead.
        if _brackets_deeper_than(yaml_text, MAX_DEPTH):
            raise FrontmatterError(f"frontmatter nests deeper than {MAX_DEPTH} levels; not read")
        loader = ObsidianPyLoader
    try:
        data = yaml.load(yaml_text, Loader=loader)  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        raise FrontmatterError(_describe(exc, line_offset)) from None
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"invalid YAML in frontmatter: {exc}") from None
    except RecursionError:
        raise FrontmatterError("frontmatter nests too deeply; not read") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise FrontmatterError(f"frontmatter is a {kind}, not a mapping of keys to values")
    return _string_keys(data)


def _string_keys(data: dict[Any, Any]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in data.items():
        name = _key_name(key)
        if name in result:
            raise FrontmatterError(f"frontmatter has the key {name!r} twice")
        result[name] = value
    return result


def _key_name(key: object) -> str:
    """Top-level keys as the text a YAML 1.2 reader in JavaScript would use."""
    if isinstance(key, str):
        return key
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, dt.date):
        return key.isoformat()
    return str(key)


def _describe(exc: yaml.MarkedYAMLError, line_offset: int) -> str:
    problem = exc.problem or exc.context or "invalid YAML"
    mark = exc.problem_mark or exc.context_mark
    if mark is None:
        return f"invalid YAML in frontmatter: {problem}"
    line = mark.line + 1 + line_offset
    return f"invalid YAML in frontmatter at line {line}, column {mark.column + 1}: {problem}"
