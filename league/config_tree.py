"""Typed config trees: dataclass fields with help and bounds, read from YAML and validated.

The machinery behind league/config.py (and the curriculum and gate specs): `param`/`section`
declare fields; `validate` checks a partial mapping against a dataclass and says, in one
ConfigError sentence, which source, which key and what was expected; `build` and `merge` make
the tree; `read_yaml` reads a file with bounded size and value count.
"""

from __future__ import annotations

import dataclasses
import math
import re
import reprlib
import sys
import types
import typing
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

import yaml

from league.errors import ConfigError, LeagueError
from league.files import FileRefused, read_regular

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # the bounds of every int field without tighter ones

# Input bounds: a config is a few kilobytes of YAML; anything far bigger is a mistake or an attack.
MAX_CONFIG_BYTES = 1 << 20
# Values in a document with its aliases expanded; SafeLoader shares aliased nodes, so a small file
# can stand for billions of values ("billion laughs") that printing or copying would expand.
MAX_YAML_VALUES = 100_000
SHOWN_CHARS = 80  # the longest quoted value or flag in a message


def param(default: Any, help: str, *, min: float | None = None, max: float | None = None,
          check: Callable[[Any], str | None] | None = None, renamed: dict[str, str] | None = None):
    """A config field with a one-line description, an optional numeric range, and an optional
    `check` of a value that has the right type and range: None when it is fine, else what is
    wrong with it, as the end of a sentence ("is not a valid SPRT: ..."). `renamed` maps a choice's
    old names to its new ones: an old name still works, for one release, with a one-line note."""
    meta = {"help": help, "min": min, "max": max, "check": check, "renamed": renamed or {}}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


def section(cls: type, help: str):
    """A nested config section."""
    return field(default_factory=cls, metadata={"help": help})


# --------------------------------------------------------------------------- validation


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(tp))
    if origin in (list, tuple):
        (inner, *_) = typing.get_args(tp) or (Any,)
        plural = {int: "integers", float: "finite numbers", str: "strings"}
        return f"a list of {plural.get(inner) or _type_name(inner)}"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(tp))
    return {int: "an integer", float: "a finite number", str: "a string", bool: "true or false",
            type(None): "null"}.get(tp, getattr(tp, "__name__", str(tp)))


_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = _SHORT.maxlong = SHOWN_CHARS
_SHORT.maxlevel = 3


def show(value: Any) -> str:
    """repr() for a message, cut short: a value a person typed can be megabytes long."""
    return _SHORT.repr(value)


def clip(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "..."


_KEY_LIKE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")


def _shown_key(key: str, prefix: str) -> str:
    """An unknown key (under `prefix`) for a message: quoted if it looks like a key someone mistyped, else only
    its length (a file that is not a config, reached through a symlink, must not be echoed line by line)."""
    return repr(f"{prefix}{key}") if _KEY_LIKE.fullmatch(key) else f"of {len(key):,} characters"


def _kind_of(value: Any) -> str:
    """What a value is, in words, never its text: for a file where a mapping belongs."""
    if isinstance(value, str):
        return f"a line of text ({len(value):,} characters)"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value):,} items"
    return "nothing (null)" if value is None else f"a {type(value).__name__}"


def _fits(value: Any, tp: Any) -> bool:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return value in typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in typing.get_args(tp))
    if origin in (list, tuple):
        (inner, *_) = typing.get_args(tp) or (Any,)
        return isinstance(value, list) and all(_fits(v, inner) for v in value)
    if tp is Any:
        return True
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is type(None):
        return value is None
    return isinstance(value, tp)


def _bounds(f: dataclasses.Field, tp: Any) -> tuple[float | None, float | None]:
    """A field's (min, max); an integer field is always bounded to 64 bits, what numpy, torch and SQLite hold."""
    lo, hi = f.metadata.get("min"), f.metadata.get("max")
    if tp is int or tp == list[int]:
        lo = INT64_MIN if lo is None else lo
        hi = INT64_MAX if hi is None else hi
    return lo, hi


def _expected(f: dataclasses.Field, tp: Any) -> str:
    text = _type_name(tp)
    lo, hi = (_number_text(b) if b is not None else None for b in _bounds(f, tp))
    if lo is not None and hi is not None:
        text += f" between {lo} and {hi}"
    elif lo is not None:
        text += f" of at least {lo}"
    elif hi is not None:
        text += f" of at most {hi}"
    return text


def _number_text(x: float) -> str:
    return str(x) if isinstance(x, int) else f"{x:g}"  # ints exactly: 4294967295, not 4.29497e+09


def _in_range(v: Any, lo: float | None, hi: float | None) -> bool:
    """Whether a number is finite and within the bounds (NaN fails every comparison, so check it first)."""
    try:
        finite = math.isfinite(v)
    except OverflowError:  # an int beyond every float, and beyond every int field's 64 bits
        return False
    return finite and (lo is None or v >= lo) and (hi is None or v <= hi)


def renamed_note(source: str, name: str, old: str, new: str) -> None:
    """The one-line note for a choice's old name (printed once per process and name)."""
    if (name, old) in _NOTED:
        return
    _NOTED.add((name, old))
    print(f"note: {source}: {name}: {old!r} is now called {new!r}; the old name works until the next release.",
          file=sys.stderr)


_NOTED: set[tuple[str, str]] = set()


def validate(cls: type, data: Any, source: str, prefix: str = "", notes: bool = True) -> None:
    """Check a (partial) mapping against the dataclass `cls`; raise ConfigError on the first problem.
    A choice's old name passes, with a one-line note on stderr unless `notes` is false."""
    where = prefix.rstrip(".") or "the top level"
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: {where} must be a mapping of keys to values, got {_kind_of(data)}.")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    known = ", ".join(sorted(fields))
    for key, value in data.items():
        if not isinstance(key, str):  # YAML reads `1:`, `null:` or `true:` as a number, null or bool
            inside = f" in {where!r}" if prefix else ""
            raise ConfigError(f"{source}: key {show(key)}{inside} must be a string (one of: {known}).")
        name = f"{prefix}{key}"
        if key not in fields:
            raise ConfigError(f"{source}: unknown key {_shown_key(key, prefix)} (expected one of: {known}).")
        tp = hints[key]
        if dataclasses.is_dataclass(tp):
            validate(tp, value, source, f"{name}.", notes)
            continue
        f = fields[key]
        renamed = f.metadata.get("renamed") or {}
        if isinstance(value, str) and value in renamed:
            if notes:
                renamed_note(source, name, value, renamed[value])
            continue
        lo, hi = _bounds(f, tp)
        numbers = [v for v in (value if isinstance(value, list) else [value])
                   if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if not _fits(value, tp) or not all(_in_range(v, lo, hi) for v in numbers):
            formerly = f" (formerly {', '.join(map(repr, renamed))})" if renamed else ""
            raise ConfigError(f"{source}: key {name!r} must be {_expected(f, tp)}{formerly}, got {show(value)}.")
        check = f.metadata.get("check")
        problem = check(value) if check is not None and value is not None else None
        if problem:
            raise ConfigError(f"{source}: key {name!r} {problem}")


def build(cls: type, data: dict[str, Any]):
    """Construct the dataclass tree from an already validated mapping."""
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    kwargs = {}
    for key, value in data.items():
        tp = hints[key]
        if dataclasses.is_dataclass(tp):
            kwargs[key] = build(tp, value)
        elif isinstance(value, str) and value in (fields[key].metadata.get("renamed") or {}):
            kwargs[key] = fields[key].metadata["renamed"][value]
        elif tp is float or (typing.get_origin(tp) in (list,) and typing.get_args(tp) == (float,)):
            kwargs[key] = [float(v) for v in value] if isinstance(value, list) else float(value)
        else:
            kwargs[key] = value
    return cls(**kwargs)


def merge(base: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge `layer` over `base` (mappings merge, everything else replaces)."""
    out = dict(base)
    for key, value in layer.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def read_yaml(path: Path, source: str) -> dict[str, Any]:
    """A config file's top-level mapping ({} when empty); every problem is one ConfigError sentence."""
    try:
        raw = read_regular(path, MAX_CONFIG_BYTES, "config file")  # never a FIFO, a device or a folder
    except FileRefused as exc:
        raise ConfigError(str(exc)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{source}: not UTF-8 text (byte {exc.start} cannot be decoded).") from None
    data = parse_yaml(text, source)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping of keys to values, got {_kind_of(data)}.")
    return data


def parse_yaml(text: str, source: str) -> Any:
    """YAML from a file or a --set flag; every way it can fail is one ConfigError sentence."""
    try:
        data = load_yaml(text)
    except yaml.constructor.ConstructorError as exc:  # a tag such as !!python/object: never constructed
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark else ""
        tag = str(getattr(exc, "problem", "")).rpartition("tag ")[2].strip("'").replace("tag:yaml.org,2002:", "!!")
        raise ConfigError(f"{source}: the YAML tag {clip(tag)!r}{at} is not read by the league; a config holds plain "
                          "values (numbers, strings, true/false, lists, mappings).") from None
    except _DuplicateKey as exc:
        raise ConfigError(f"{source}: key {clip(exc.key)!r} is written twice in one mapping (again at line "
                          f"{exc.line}); write it once.") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{source}: not valid YAML{at}.") from None
    except ValueError:  # e.g. an integer of more digits than Python converts (sys.get_int_max_str_digits)
        raise ConfigError(f"{source}: not valid YAML (a number too long to read).") from None
    except RecursionError:  # PyYAML composes nested collections recursively
        raise ConfigError(f"{source}: not valid YAML (nested too deeply).") from None
    if _too_many_values(data):
        raise ConfigError(f"{source}: the YAML holds more than {MAX_YAML_VALUES} values once its aliases "
                          "are expanded; a config holds a few hundred.")
    return data


def _too_many_values(data: Any) -> bool:
    """Whether `data`, with shared (aliased) parts counted each time they appear, exceeds MAX_YAML_VALUES."""
    stack, count = [data], 0
    while stack:
        item = stack.pop()
        count += 1
        if count > MAX_YAML_VALUES:
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class _DuplicateKey(yaml.YAMLError):
    def __init__(self, key: str, line: int):
        super().__init__(key, line)
        self.key, self.line = key, line


_MERGE = "tag:yaml.org,2002:merge"


class _Loader(yaml.SafeLoader):
    """YAML 1.1 reads 5e-4 (no dot) as a string; resolve YAML 1.2 floats like 5e-4 and 1E3 as numbers.
    A key written twice in one mapping is refused (PyYAML lets the last silently win)."""

    def compose_mapping_node(self, anchor):
        # Checked on the composed nodes, before merge keys (<<) are flattened into them: a key over a merged
        # mapping's is an override, not a duplicate.
        node = super().compose_mapping_node(anchor)
        seen: set[tuple[str, str]] = set()
        for key, _ in node.value:
            if isinstance(key, yaml.ScalarNode) and key.tag != _MERGE:
                if (key.tag, key.value) in seen:
                    raise _DuplicateKey(key.value, key.start_mark.line + 1)
                seen.add((key.tag, key.value))
        return node


# YAML 1.2's booleans only (true/false): YAML 1.1 also reads off, on, yes, no, y and n as booleans, so
# `--set training.amp=off` reached a choice of strings as False.
_BOOL = "tag:yaml.org,2002:bool"
_Loader.yaml_implicit_resolvers = {first: [(tag, rx) for tag, rx in resolvers if tag != _BOOL]
                                   for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Loader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][-+]?[0-9]+)?$|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$"),
    list("-+0123456789."),
)


def load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)


def walk(data: dict[str, Any], path: tuple[str, ...] = ()):
    """Every (key path, value) of a nested mapping, parents before their children."""
    for key, value in data.items():
        yield path + (key,), value
        if isinstance(value, dict):
            yield from walk(value, path + (key,))


def check_file_name(name: str, source: str, key: str) -> None:
    """A run-name prefix read from a file (a curriculum's, a league's): the name rule as a ConfigError."""
    from league.names import check_run_name

    try:
        check_run_name(name, f"{source}: key {key!r}:")
    except LeagueError as exc:
        raise ConfigError(str(exc)) from None


def read_shipped_or(path: Path | None, shipped: Path, default_file: str) -> tuple[dict[str, Any], str]:
    """A driver file's mapping and its source: `path`, or the shipped configs/`default_file` (in `shipped`)."""
    if path is None:
        return read_yaml(shipped / default_file, f"configs/{default_file}"), f"configs/{default_file}"
    return read_yaml(Path(path), str(path)), str(path)
