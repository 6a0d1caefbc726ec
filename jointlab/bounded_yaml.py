"""YAML with bounded work and memory, for robot files and command programs.

PyYAML's safe loader never runs code, but it happily builds what a small hostile file
describes: anchors and aliases nested a few levels deep (a "billion laughs" document) are
shared objects in memory, yet anything that walks them (a ``repr`` in an error message, a
comparison, a copy) does exponential work; brackets nested thousands deep overflow the
recursion limit. :func:`load_yaml` refuses, before constructing anything:

* text longer than :data:`MAX_YAML_CHARS` characters;
* nesting deeper than :data:`MAX_DEPTH` collections, counted with every alias expanded;
* more than :data:`MAX_NODES` values, counted with every alias expanded;
* an alias to a collection that contains it (a recursive document);
* integers with more than :data:`MAX_INT_DIGITS` digits.

Each refusal, and every YAML syntax error, is raised as the caller's error type, with the
source named first.
"""

from __future__ import annotations

import os
import re
from typing import Any

import yaml

from jointlab.errors import JointLabError, quote

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "MAX_NODES", "MAX_YAML_CHARS", "load_yaml", "read_text"]

#: Longest YAML text read, characters (robot files and programs are a few kilobytes).
MAX_YAML_CHARS = 4 * 1024 * 1024
#: Deepest nesting of lists and mappings, aliases expanded.
MAX_DEPTH = 24
#: Most scalars and collections in one document, aliases expanded.
MAX_NODES = 200_000
#: Most digits of an integer (no physical quantity needs more; Python refuses 4300+).
MAX_INT_DIGITS = 40

_COLLECTION_START = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_COLLECTION_END = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
_LONG_INT = re.compile(rf"^[-+]?[0-9_]{{{MAX_INT_DIGITS + 1},}}$")


def _flow_depth(text: str) -> int:
    """Deepest bracket nesting of ``text``, counting brackets in strings too (a bound).

    PyYAML's scanner costs O(depth²) in flow collections (``[[[[...``), so this linear
    count refuses absurd depths before the scanner sees them.
    """
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _check_events(text: str, loader: type[yaml.SafeLoader], fail: Any) -> None:
    """Refuse deep nesting before composing (the composer recurses per level)."""
    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, _COLLECTION_START):
            depth += 1
            if depth > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark else "?"
                raise fail(f"nested deeper than {MAX_DEPTH} levels (line {line})")
        elif isinstance(event, _COLLECTION_END):
            depth -= 1
        elif (
            isinstance(event, yaml.ScalarEvent) and not event.style and _LONG_INT.match(event.value)
        ):
            line = event.start_mark.line + 1 if event.start_mark else "?"
            raise fail(f"an integer of more than {MAX_INT_DIGITS} digits (line {line})")


def _measure(
    node: yaml.Node, memo: dict[int, tuple[int, int]], active: set[int], fail: Any
) -> tuple[int, int]:
    """(values, depth) of ``node`` with aliases expanded; shared nodes are measured once."""
    key = id(node)
    if key in memo:
        return memo[key]
    if key in active:
        raise fail("an alias refers to a collection that contains it (a recursive document)")
    if isinstance(node, yaml.ScalarNode):
        memo[key] = (1, 0)
        return memo[key]
    active.add(key)
    children = (
        node.value
        if isinstance(node, yaml.SequenceNode)
        else [part for pair in node.value for part in pair]
    )
    count, depth = 1, 0
    for child in children:
        child_count, child_depth = _measure(child, memo, active, fail)
        count += child_count
        depth = max(depth, child_depth)
        if count > MAX_NODES:
            raise fail(f"more than {MAX_NODES} values once its aliases are expanded")
    active.discard(key)
    if depth + 1 > MAX_DEPTH:
        raise fail(f"nested deeper than {MAX_DEPTH} levels once its aliases are expanded")
    memo[key] = (count, depth + 1)
    return memo[key]


def _with_libyaml(loader: type[yaml.SafeLoader]) -> type:
    """``loader``'s resolvers and constructors on libyaml's C parser, when PyYAML has it."""
    if not getattr(yaml, "__with_libyaml__", False):
        return loader
    fast = _FAST.get(loader)
    if fast is None:
        fast = type(
            f"C{loader.__name__}",
            (yaml.CSafeLoader,),
            {
                "yaml_implicit_resolvers": loader.yaml_implicit_resolvers,
                "yaml_constructors": loader.yaml_constructors,
            },
        )
        _FAST[loader] = fast
    return fast


_FAST: dict[type, type] = {}


def load_yaml(
    text: str,
    source: str,
    error: type[JointLabError],
    loader: type[yaml.SafeLoader] = yaml.SafeLoader,
) -> Any:
    """Parse one YAML document within the bounds of the module docstring.

    Args:
        text: The YAML text.
        source: What to call it in messages (a file path, ``<yaml text>``).
        error: The :class:`~jointlab.errors.JointLabError` subclass to raise.
        loader: A :class:`yaml.SafeLoader` subclass (custom resolvers).

    Raises:
        error: invalid YAML, or a document beyond the bounds; the message starts with
            ``source``.
    """

    def fail(reason: str) -> JointLabError:
        return error(f"{source}: {reason}")

    if len(text) > MAX_YAML_CHARS:
        raise fail(f"too large: {len(text)} characters, at most {MAX_YAML_CHARS}")
    if _flow_depth(text) > 4 * MAX_DEPTH:
        raise fail(
            f"nested deeper than {MAX_DEPTH} levels (more than {4 * MAX_DEPTH} open brackets)"
        )
    loader = _with_libyaml(loader)
    try:
        _check_events(text, loader, fail)
        instance = loader(text)
        try:
            node = instance.get_single_node()
            if node is None:
                return None
            _measure(node, {}, set(), fail)
            return instance.construct_document(node)
        finally:
            instance.dispose()
    except JointLabError:
        raise
    except yaml.YAMLError as exc:
        reason = str(exc).replace("\n", " ")
        raise fail(f"not valid YAML: {reason[:300]}") from None
    except (ValueError, OverflowError, RecursionError, TypeError) as exc:
        # Constructor corners: a timestamp out of range, a huge float exponent...
        raise fail(f"not valid YAML: {type(exc).__name__}: {str(exc)[:200]}") from None


def read_text(
    path: str | os.PathLike[str], what: str, error: type[JointLabError], limit: int = MAX_YAML_CHARS
) -> str:
    """The UTF-8 text of a file of at most ``limit`` bytes.

    Raises:
        error: the file is missing, unreadable, larger than ``limit``, not UTF-8, or its
            name is not a valid path (a NUL byte); the message starts with the path.
    """
    shown = quote(os.fspath(path), 200)
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise error(f"{shown}: cannot read {what}: {exc.strerror or exc}") from None
    except ValueError as exc:  # an embedded NUL byte
        raise error(f"{shown}: not a valid file name: {exc}") from None
    if len(data) > limit:
        raise error(f"{shown}: {what} too large: more than {limit} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{shown}: cannot read {what}: not UTF-8 text (byte {exc.start})") from None
