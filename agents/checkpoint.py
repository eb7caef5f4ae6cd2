"""Checkpoints: safetensors weights plus JSON metadata, never unpickled (format: docs/checkpoint.md).

A checkpoint is two files with the same stem:

    NAME.safetensors  the network's tensors ("model/..."), optionally the optimizer's
                      ("optimizer/<param>/<key>"); its header's __metadata__ records the
                      format, the sha256 of its own tensor data and the sha256 of NAME.json
    NAME.json         what the network is: kind, architecture, observation layout and action
                      table versions, training config, steps, optimizer settings

Because the weights file binds the metadata by hash, the sha256 of NAME.safetensors alone
identifies the whole checkpoint; that is the hash the registry keeps.

Every refusal is one sentence raised as league.errors.LeagueError.

Why one module of this length: the writer, the reader and every check a file handed in must
pass (docs/checkpoint.md, "Reading") describe one format; kept together, a change to the format
is made and reviewed in one place, and the reader's checks read in the order they run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import struct
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors

from agents.actions import ACTION_TABLE_VERSION
from agents.networks import ActorCritic, build_network
from agents.obs import OBS_LAYOUT_VERSION
from league.config import PolicyConfig
from league.config_tree import validate
from league.errors import LeagueError
from league.files import already_exists, read_regular, write_file_atomic

FORMAT_NAME = "rl-league-checkpoint"
FORMAT_VERSION = 1
# Architecture fields added after format 1 shipped, with the value that files written before them meant.
ARCHITECTURE_ADDED_FIELDS = {"car_frame": False, "action_space": "table", "prev_controls": False}  # what older checkpoints mean
WEIGHTS_SUFFIX = ".safetensors"
META_SUFFIX = ".json"
MODEL_PREFIX = "model/"
OPTIMIZER_PREFIX = "optimizer/"
# A safetensors header is a few KiB (about 100 bytes per tensor: ~7 KiB for the seed network
# with its Adam state); anything claiming more than this is not one of ours.
MAX_HEADER_BYTES = 1 << 20
HASH_CHUNK_BYTES = 1 << 20

# Bounds on what a checkpoint may describe, checked before anything is allocated, so a hostile
# metadata file cannot make the loader build a 40 GB network. The seed network is [1024, 512,
# 256] wide (about 1M parameters); these leave ample room above it.
MAX_HIDDEN_LAYERS = 16  # per head
MAX_PARAMETERS = 50_000_000  # 200 MB of float32 weights
# The weights and Adam's two moments of the largest network allowed, and a header.
MAX_CHECKPOINT_BYTES = 3 * 4 * MAX_PARAMETERS + MAX_HEADER_BYTES
MAX_METADATA_BYTES = 1 << 20  # NAME.json is a few KiB, the training config being most of it
MAX_STEPS_TRAINED = 10**12  # environment steps; the longest runs anywhere are around 1e11
# Optimizer state the learner (training/ppo.py, Adam) needs for every parameter it has state for;
# torch's Optimizer.load_state_dict() checks none of it, and a resumed run would fail at its first update.
ADAM_STATE_KEYS = frozenset({"step", "exp_avg", "exp_avg_sq"})
ADAM_AMSGRAD_KEY = "max_exp_avg_sq"
ADAM_GROUP_NUMBERS = ("lr", "eps", "weight_decay")
_INDEX = re.compile(r"0|[1-9][0-9]*")  # a parameter index as the optimizer state names it
# Tensor dtypes a checkpoint may hold (torch's float8 types cannot even be checked for finiteness).
FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
# The largest weight magnitude a checkpoint may hold, checked in the network's own dtype (float32). Trained
# weights are of order 1 (a few tens at most); a weight near float32's 3e38 is finite but makes every
# forward overflow, so beyond this a network is broken, not trained. The learner stops before it gets there.
MAX_WEIGHT = 1e6

REQUIRED_FIELDS: dict[str, type | tuple[type, ...]] = {
    "format": str,
    "format_version": int,
    "kind": str,
    "architecture": dict,
    "obs_layout_version": int,
    "action_table_version": int,
    "training_config": (dict, type(None)),
    "steps": int,
    "optimizer": (dict, type(None)),
}


@dataclass(frozen=True)
class CheckpointMeta:
    """The JSON half of a checkpoint."""

    kind: str
    architecture: PolicyConfig
    steps: int = 0
    training_config: dict[str, Any] | None = None
    optimizer: dict[str, Any] | None = None  # {"class": ..., "param_groups": [...], "scalars": {...}}
    obs_layout_version: int = OBS_LAYOUT_VERSION
    action_table_version: int = ACTION_TABLE_VERSION
    created: str = ""
    notes: str = ""
    format_version: int = FORMAT_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT_NAME,
            "format_version": self.format_version,
            "kind": self.kind,
            "architecture": dataclasses.asdict(self.architecture),
            "obs_layout_version": self.obs_layout_version,
            "action_table_version": self.action_table_version,
            "training_config": self.training_config,
            "steps": self.steps,
            "optimizer": self.optimizer,
            "created": self.created,
            "notes": self.notes,
        }


@dataclass(frozen=True)
class Checkpoint:
    """A verified checkpoint: its metadata, the network with its weights, and its identity."""

    meta: CheckpointMeta
    net: ActorCritic
    optimizer_state: dict[str, Any] | None  # torch Optimizer.load_state_dict() form, or None
    sha256: str  # of the .safetensors file
    weights_path: Path
    meta_path: Path


# --------------------------------------------------------------------------- paths and hashes


def checkpoint_paths(path: str | Path) -> tuple[Path, Path]:
    """(weights, metadata) for a checkpoint named by either of its files or by its stem.

    An existing file with another suffix (say a .pt someone hands in) is taken as the
    weights file, so it is inspected and refused for what it is.
    """
    path = Path(path)
    if path.suffix in (WEIGHTS_SUFFIX, META_SUFFIX):
        path = path.with_suffix("")
    elif path.suffix and _present(path):  # a FIFO or a folder handed in is refused for what it is
        return path, path.with_suffix(META_SUFFIX)
    return path.with_name(path.name + WEIGHTS_SUFFIX), path.with_name(path.name + META_SUFFIX)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(HASH_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def checkpoint_sha256(path: str | Path) -> str:
    """The checkpoint's identity: the sha256 of its .safetensors file (which binds the .json)."""
    return sha256_file(checkpoint_paths(path)[0])


# --------------------------------------------------------------------------- saving


def _finite_tensors(prefix: str, tensors: dict[str, torch.Tensor],
                    bound: float | None = None) -> dict[str, torch.Tensor]:
    """The tensors, prefixed and copied to the CPU; non-finite ones (or, with `bound`, ones holding a value
    larger in magnitude: what loading would refuse) are refused."""
    out = {}
    for name, tensor in tensors.items():
        tensor = tensor.detach().to("cpu").contiguous()
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise LeagueError(f"Refusing to save a checkpoint: tensor {name!r} contains NaN or infinite values.")
        if bound is not None and tensor.is_floating_point() and tensor.numel() and float(tensor.abs().max()) > bound:
            raise LeagueError(f"Refusing to save a checkpoint: tensor {name!r} holds values larger than {bound:g} in "
                              "magnitude, which no checkpoint may hold.")
        out[prefix + name] = tensor.clone()  # no shared storage: safetensors refuses aliased tensors
    return out


def _split_optimizer_state(state: dict[str, Any]) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Optimizer.state_dict() -> (tensors by 'param/key', JSON part: param_groups and scalar state)."""
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, dict[str, Any]] = {}
    for param, entries in state["state"].items():
        for key, value in entries.items():
            if isinstance(value, torch.Tensor):
                tensors[f"{param}/{key}"] = value
            else:
                scalars.setdefault(str(param), {})[key] = value
    return tensors, {"param_groups": state["param_groups"], "scalars": scalars}


def _safetensors_bytes(tensors: dict[str, torch.Tensor], meta_sha256: str) -> bytes:
    """Serialise the tensors with a header that records the hashes of the data and the metadata."""

    def serialise(data_sha256: str) -> bytes:
        return save_tensors(tensors, metadata={
            "format": FORMAT_NAME, "format_version": str(FORMAT_VERSION),
            "data_sha256": data_sha256, "metadata_sha256": meta_sha256,
        })

    # The data section does not depend on the header, so hash it from a first pass.
    data_sha256 = sha256_bytes(_data_section(serialise("0" * 64)))
    blob = serialise(data_sha256)
    assert sha256_bytes(_data_section(blob)) == data_sha256
    return blob


def _data_section(blob: bytes) -> bytes:
    (header_len,) = struct.unpack("<Q", blob[:8])
    return blob[8 + header_len:]


def write_checkpoint(path: str | Path, tensors: dict[str, torch.Tensor], meta: dict[str, Any], *,
                     exclusive: bool = False) -> str:
    """Write a checkpoint pair from prefixed tensors and the metadata's JSON form; returns its sha256.

    The low-level writer behind `save_checkpoint` (which builds both arguments from a network).
    With `exclusive`, neither file ever replaces an existing one (see `write_file_atomic`).
    """
    weights_path, meta_path = checkpoint_paths(path)
    if exclusive:
        for existing in (p for p in (meta_path, weights_path) if p.exists()):
            raise already_exists(existing)
    weights_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        meta_bytes = (json.dumps(meta, indent=2, sort_keys=True, allow_nan=False) + "\n").encode()
    except (TypeError, ValueError):
        raise LeagueError("Refusing to save a checkpoint: its metadata cannot be written as JSON.") from None
    blob = _safetensors_bytes(tensors, sha256_bytes(meta_bytes))
    # Metadata first: a crash between the two renames leaves a pair whose hashes disagree,
    # which loading refuses, never a pair that silently mis-reads.
    write_file_atomic(meta_path, meta_bytes, exclusive=exclusive)
    try:
        write_file_atomic(weights_path, blob, exclusive=exclusive)
    except BaseException:
        if exclusive:  # the metadata is ours (its link succeeded): leave no half pair behind
            meta_path.unlink(missing_ok=True)
        raise
    return sha256_bytes(blob)


def save_checkpoint(
    path: str | Path,
    net: ActorCritic,
    *,
    steps: int = 0,
    training_config: dict[str, Any] | None = None,
    optimizer: torch.optim.Optimizer | dict[str, Any] | None = None,
    learner_stats: dict[str, float] | None = None,
    notes: str = "",
    exclusive: bool = False,
) -> str:
    """Write NAME.safetensors and NAME.json atomically; returns the checkpoint's sha256.

    `optimizer` is an Optimizer or its state_dict(); its tensors go into the safetensors
    file and its settings into the JSON, with `learner_stats` (the learner's running
    statistics, numbers only) beside them. Non-finite weights are refused. With `exclusive`,
    existing files are never replaced: writing over them is refused with a LeagueError.
    """
    tensors = _finite_tensors(MODEL_PREFIX, net.state_dict(), bound=MAX_WEIGHT)
    optimizer_json = None
    if optimizer is not None:
        state = optimizer.state_dict() if isinstance(optimizer, torch.optim.Optimizer) else optimizer
        opt_tensors, optimizer_json = _split_optimizer_state(state)
        if isinstance(optimizer, torch.optim.Optimizer):
            optimizer_json["class"] = type(optimizer).__name__
        if learner_stats:  # running statistics the learner resumes with (e.g. the return scale)
            optimizer_json["learner_stats"] = {k: float(v) for k, v in learner_stats.items()}
        tensors.update(_finite_tensors(OPTIMIZER_PREFIX, opt_tensors))
    meta = CheckpointMeta(
        kind=net.config.kind, architecture=net.config, steps=int(steps), training_config=training_config,
        optimizer=optimizer_json, created=datetime.now(timezone.utc).isoformat(timespec="seconds"), notes=notes,
    )
    return write_checkpoint(path, tensors, meta.to_json(), exclusive=exclusive)


# --------------------------------------------------------------------------- loading


def _looks_pickled(blob: bytes) -> bool:
    """A pickle (protocol 2+: opcode PROTO, then the version) or a zip archive (torch.save)."""
    return (blob[:1] == b"\x80" and blob[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05")) or blob[:4] == b"PK\x03\x04"


def _read_header(blob: bytes, where: Path) -> dict[str, Any]:
    """The safetensors JSON header, or a refusal saying what the file is instead.

    The file is read as safetensors first: a valid header can begin with the same bytes as a
    pickle (its first byte is the header length's low byte), so the pickle diagnosis is only
    made for a file that is not safetensors.
    """
    not_ours = f"{where} is not an rl-league checkpoint"

    def refuse(why: str) -> LeagueError:
        if _looks_pickled(blob):
            why = "it looks like a pickle or torch.save file, which rl-league never loads"
        return LeagueError(f"{not_ours}: {why}.")

    if len(blob) < 8:
        raise refuse("it is too short to be a safetensors file")
    (header_len,) = struct.unpack("<Q", blob[:8])
    if header_len > min(MAX_HEADER_BYTES, len(blob) - 8):
        raise refuse("it is not a safetensors file, or it is truncated")
    try:
        header = json.loads(blob[8:8 + header_len])
    except (UnicodeDecodeError, ValueError):
        raise refuse("its safetensors header is not valid JSON (the file is corrupt)") from None
    except RecursionError:  # e.g. a header of nested brackets: the parser recurses into each
        raise refuse("its safetensors header is nested too deeply to be one") from None
    if not isinstance(header, dict) or not isinstance(header.get("__metadata__"), dict):
        raise refuse("its safetensors header has no rl-league metadata")
    info = header["__metadata__"]
    if info.get("format") != FORMAT_NAME:
        raise LeagueError(f"{not_ours}: its safetensors header does not name the {FORMAT_NAME} format.")
    for key in ("format_version", "data_sha256", "metadata_sha256"):
        if not isinstance(info.get(key), str):
            raise LeagueError(f"{where} is corrupt: its safetensors header lacks {key!r}.")
    return info


def _check_versions(meta: dict[str, Any], where: Path) -> None:
    if meta["format"] != FORMAT_NAME:
        raise LeagueError(f"{where} is not rl-league checkpoint metadata (format {meta['format']!r}).")
    if meta["format_version"] < 1:
        raise LeagueError(f"Checkpoint metadata {where} has a malformed field 'format_version'.")
    if meta["format_version"] > FORMAT_VERSION:
        raise LeagueError(f"{where} uses checkpoint format version {meta['format_version']}, newer than this "
                          f"rl-league reads ({FORMAT_VERSION}); upgrade rl-league.")
    if meta["obs_layout_version"] != OBS_LAYOUT_VERSION:
        raise LeagueError(f"{where} was trained for observation layout version {meta['obs_layout_version']}, but "
                          f"this rl-league speaks version {OBS_LAYOUT_VERSION}, so it cannot be used.")
    if meta["action_table_version"] != ACTION_TABLE_VERSION:
        raise LeagueError(f"{where} was trained for action table version {meta['action_table_version']}, but "
                          f"this rl-league speaks version {ACTION_TABLE_VERSION}, so it cannot be used.")


def _is_number(value: Any) -> bool:
    """A finite int or float (JSON reads NaN, Infinity and 400-digit integers; a bool is not a number here)."""
    try:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    except OverflowError:
        return False


def _check_depth(architecture: PolicyConfig, where: Path) -> None:
    """Refuse more layers than the loader's bound (widths are bounded by the parameter count)."""
    for head in ("actor", "critic"):
        layers = len(getattr(architecture, f"{head}_sizes"))
        if layers > MAX_HIDDEN_LAYERS:
            raise LeagueError(f"Checkpoint metadata {where} describes a {head} of {layers} hidden layers, more "
                              f"than this rl-league loads ({MAX_HIDDEN_LAYERS}).")


def _check_learner_stats(optimizer: dict[str, Any] | None, where: Path) -> None:
    """The learner's running statistics are finite numbers (a resumed run divides by them)."""
    stats = (optimizer or {}).get("learner_stats", {})
    if not isinstance(stats, dict) or not all(_is_number(v) for v in stats.values()):
        raise LeagueError(f"Checkpoint metadata {where} has learner statistics that are not all finite numbers.")
    for key in ("return_count", "return_m2"):  # a count and a sum of squares: a negative one is impossible
        if stats.get(key, 0) < 0:
            raise LeagueError(f"Checkpoint metadata {where} has a negative learner statistic {key!r}.")


def _parse_meta(meta_bytes: bytes, where: Path) -> CheckpointMeta:
    try:
        meta = json.loads(meta_bytes)
    except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: nested too deeply to parse
        raise LeagueError(f"Checkpoint metadata {where} is not valid JSON.") from None
    if not isinstance(meta, dict):
        raise LeagueError(f"Checkpoint metadata {where} must be a JSON object.")
    for key, types in REQUIRED_FIELDS.items():
        if key not in meta:
            raise LeagueError(f"Checkpoint metadata {where} is missing the field {key!r}.")
        if not isinstance(meta[key], types) or isinstance(meta[key], bool):
            raise LeagueError(f"Checkpoint metadata {where} has a malformed field {key!r}.")
    _check_versions(meta, where)
    if not 0 <= meta["steps"] <= MAX_STEPS_TRAINED:
        raise LeagueError(f"Checkpoint metadata {where} records {meta['steps']} steps trained, which is impossible "
                          f"(expected 0 to {MAX_STEPS_TRAINED:,}).")
    _check_learner_stats(meta["optimizer"], where)
    meta["architecture"] = {**ARCHITECTURE_ADDED_FIELDS, **meta["architecture"]}
    missing = [f.name for f in dataclasses.fields(PolicyConfig) if f.name not in meta["architecture"]]
    if missing:
        raise LeagueError(f"Checkpoint metadata {where} has an architecture without {missing[0]!r}.")
    validate(PolicyConfig, meta["architecture"], f"{where} (architecture)")
    architecture = PolicyConfig(**meta["architecture"])
    if architecture.kind != meta["kind"]:
        raise LeagueError(f"Checkpoint metadata {where} says kind {meta['kind']!r} but its architecture is "
                          f"{architecture.kind!r}.")
    _check_depth(architecture, where)
    return CheckpointMeta(
        kind=meta["kind"], architecture=architecture, steps=meta["steps"], training_config=meta["training_config"],
        optimizer=meta["optimizer"], obs_layout_version=meta["obs_layout_version"],
        action_table_version=meta["action_table_version"], created=str(meta.get("created", "")),
        notes=str(meta.get("notes", "")), format_version=meta["format_version"],
    )


def _as_float(tensor: torch.Tensor, dtype: torch.dtype) -> torch.Tensor | None:
    """`tensor` converted to `dtype`, the one the network (or the optimizer) holds it in, or None when it is
    not a float tensor or not finite once converted: float64 weights of 1e300 are finite, but infinite in
    float32, so finiteness is checked after the conversion."""
    if tensor.dtype not in FLOAT_DTYPES:
        return None
    converted = tensor.to(dtype)
    return converted if bool(torch.isfinite(converted).all()) else None


def _network_outline(architecture: PolicyConfig, where: Path) -> ActorCritic:
    """The network the architecture describes, built on the meta device: every tensor's name and
    shape, with no memory behind them, so the parameter count is bounded and the file checked
    against it before the real network is built (a hostile architecture then costs nothing)."""
    with torch.device("meta"):
        outline = build_network(architecture)
    count = sum(p.numel() for p in outline.parameters())
    if count > MAX_PARAMETERS:
        raise LeagueError(f"Checkpoint metadata {where} describes a network of {count:,} parameters, more than this "
                          f"rl-league loads ({MAX_PARAMETERS:,}).")
    return outline


def check_trainable(architecture: PolicyConfig) -> None:
    """Refuse, before any training, a network whose checkpoints this rl-league would not load back."""
    for head in ("actor", "critic"):
        layers = len(getattr(architecture, f"{head}_sizes"))
        if layers > MAX_HIDDEN_LAYERS:
            raise LeagueError(f"policy.{head}_sizes lists {layers} hidden layers; a checkpoint holds at most "
                              f"{MAX_HIDDEN_LAYERS}.")
    with torch.device("meta"):
        count = sum(p.numel() for p in build_network(architecture).parameters())
    if count > MAX_PARAMETERS:
        raise LeagueError(f"The policy's layer sizes make a network of {count:,} parameters; a checkpoint holds at "
                          f"most {MAX_PARAMETERS:,}.")


def _model_tensors(outline: ActorCritic, tensors: dict[str, torch.Tensor], where: Path) -> dict[str, torch.Tensor]:
    """The model tensors, refusing missing, extra, misshapen or non-finite ones (against the outline)."""
    expected = outline.state_dict()
    found = {k[len(MODEL_PREFIX):]: v for k, v in tensors.items() if k.startswith(MODEL_PREFIX)}
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    if missing or extra:
        name = missing[0] if missing else extra[0]
        what = "lacks" if missing else "has an unexpected"
        raise LeagueError(f"{where} does not match its architecture: it {what} tensor {name!r}.")
    for name, tensor in sorted(found.items()):
        if tuple(tensor.shape) != tuple(expected[name].shape):
            raise LeagueError(f"{where} does not match its architecture: tensor {name!r} has shape "
                              f"{list(tensor.shape)} but the architecture needs {list(expected[name].shape)}.")
    out = {}
    for name, tensor in sorted(found.items()):
        converted = _as_float(tensor, expected[name].dtype)
        if converted is None:
            raise LeagueError(f"{where} is unusable: tensor {name!r} holds non-finite or non-float values (as "
                              f"{str(expected[name].dtype).removeprefix('torch.')}, the network's type).")
        if converted.numel() and float(converted.abs().max()) > MAX_WEIGHT:
            raise LeagueError(f"{where} is unusable: tensor {name!r} holds weights larger than {MAX_WEIGHT:g} in "
                              "magnitude, which no trained network has.")
        out[name] = converted
    return out


def _check_param_groups(groups: Any, optimizer_class: Any, n_params: int, refuse) -> None:
    """A list of dicts whose 'params' are the network's parameter indices, in order (what
    Optimizer.state_dict() writes for an optimizer over net.parameters()), with settings that
    are flags, names or finite numbers."""
    if not isinstance(groups, list) or not groups or not all(isinstance(g, dict) for g in groups):
        raise refuse("its parameter groups are not a list of objects")
    indices = [i for g in groups for i in (g.get("params") if isinstance(g.get("params"), list) else [None])]
    if indices != list(range(n_params)) or not all(type(i) is int for i in indices):
        raise refuse(f"its parameter groups do not list the network's {n_params} parameters")
    for group in groups:
        for key, value in group.items():
            values = value if isinstance(value, list) else [value]
            if key != "params" and not all(v is None or isinstance(v, (bool, str)) or _is_number(v) for v in values):
                raise refuse(f"the setting {key!r} is not a flag, a name or finite numbers")
        if optimizer_class == "Adam":  # what Adam's step reads from each group
            betas = group.get("betas")
            if not all(_is_number(group.get(k)) and group[k] >= 0 for k in ADAM_GROUP_NUMBERS) or not (
                    isinstance(betas, list) and len(betas) == 2 and all(_is_number(b) and 0 <= b < 1 for b in betas)):
                raise refuse("Adam's lr, betas, eps and weight_decay are missing or out of range")


def _optimizer_state(tensors: dict[str, torch.Tensor], json_part: dict[str, Any] | None, outline: ActorCritic,
                     where: Path) -> dict[str, Any] | None:
    """The optimizer state in Optimizer.load_state_dict() form, refused unless it fits the network.

    Optimizer.load_state_dict() checks little (not the state tensors' shapes, nor the settings),
    so a malformed state would load and then fail at the first update of a resumed run: every
    state tensor must have its parameter's shape (a scalar for 'step'), be finite, and name a
    parameter of the network; scalars must be finite numbers.
    """
    def refuse(why: str) -> LeagueError:
        return LeagueError(f"{where} has a malformed optimizer state: {why}.")

    opt_tensors = {k[len(OPTIMIZER_PREFIX):]: v for k, v in tensors.items() if k.startswith(OPTIMIZER_PREFIX)}
    if json_part is None:
        if opt_tensors:
            raise refuse("it has optimizer tensors but no optimizer settings")
        return None
    params = list(outline.parameters())
    shapes = [tuple(p.shape) for p in params]
    optimizer_class = json_part.get("class")
    _check_param_groups(json_part.get("param_groups"), optimizer_class, len(shapes), refuse)

    def param_index(text: str) -> int:
        if not _INDEX.fullmatch(text) or int(text) >= len(shapes):
            raise refuse(f"{text!r} is not a parameter of the network")
        return int(text)

    state: dict[int, dict[str, Any]] = {}
    for key, tensor in opt_tensors.items():
        param, _, name = key.partition("/")
        index = param_index(param)
        shape = () if name == "step" else shapes[index]  # Adam's step count is a 0-d tensor
        if not name or tuple(tensor.shape) != shape:
            raise refuse(f"tensor {OPTIMIZER_PREFIX + key!r} has shape {list(tensor.shape)}, not {list(shape)}")
        # Checked as the optimizer holds it: Adam keeps its step in float32, the rest in the parameter's dtype.
        converted = _as_float(tensor, torch.float32 if name == "step" else params[index].dtype)
        if converted is None or (name == "step" and bool((converted < 0).any())):
            raise refuse(f"tensor {OPTIMIZER_PREFIX + key!r} holds non-finite or non-float values, or a negative step")
        state.setdefault(index, {})[name] = converted
    scalars = json_part.get("scalars", {})
    if not isinstance(scalars, dict):
        raise refuse("its scalars are not an object")
    for param, entries in scalars.items():
        if not isinstance(entries, dict) or not all(_is_number(v) for v in entries.values()):
            raise refuse(f"the scalars of parameter {param!r} are not all finite numbers")
        state.setdefault(param_index(param), {}).update(entries)
    groups = json_part["param_groups"]
    if optimizer_class == "Adam":  # Adam's step needs all of its state for a parameter, or none
        for group in groups:
            needed = ADAM_STATE_KEYS | ({ADAM_AMSGRAD_KEY} if group.get("amsgrad") else set())
            for index in group["params"]:
                if index in state and set(state[index]) != needed:
                    raise refuse(f"parameter {index} has state {sorted(state[index])}, not {sorted(needed)}")
    return {"state": state, "param_groups": list(groups)}


def _present(path: Path) -> bool:
    """Whether anything is at `path` (a dangling symlink included): what is there is then read by the file
    rule, which names it if it is not a file, rather than called missing."""
    return path.exists() or path.is_symlink()


def read_checkpoint_meta(path: str | Path, expected_sha256: str | None = None) -> CheckpointMeta:
    """A checkpoint's verified metadata (its architecture, steps, training config), without building its network:
    every check of load_checkpoint's up to the metadata, the same sentences."""
    return _verified(path, expected_sha256)[0]


def _verified(path: str | Path, expected_sha256: str | None) -> tuple[CheckpointMeta, bytes, str, Path, Path]:
    """(metadata, the weights file's bytes, their sha256, the two paths) of a checkpoint whose files are checked
    against each other and `expected_sha256`."""
    weights_path, meta_path = checkpoint_paths(path)
    if not _present(weights_path):
        raise LeagueError(f"No checkpoint file at {weights_path}.")
    # The shared file rule (league/files.py): a regular file of a bounded size; a FIFO, a device or a
    # folder is refused at once for what it is, never opened for a blocking read.
    blob = read_regular(weights_path, MAX_CHECKPOINT_BYTES, "checkpoint")
    sha = sha256_bytes(blob)
    if expected_sha256 is not None and sha != expected_sha256.lower():
        raise LeagueError(f"{weights_path} has sha256 {sha[:16]}…, not the expected {expected_sha256[:16]}…; "
                          "the file was changed or damaged since it was recorded.")
    info = _read_header(blob, weights_path)
    if sha256_bytes(_data_section(blob)) != info["data_sha256"]:
        raise LeagueError(f"{weights_path} is truncated or corrupt: its tensor data does not match the checksum in its header.")
    if not _present(meta_path):
        raise LeagueError(f"{weights_path} has no metadata file {meta_path.name} beside it; "
                          "a checkpoint is the .safetensors file together with its .json.")
    meta_bytes = read_regular(meta_path, MAX_METADATA_BYTES, "checkpoint metadata file")
    if sha256_bytes(meta_bytes) != info["metadata_sha256"]:
        raise LeagueError(f"{meta_path} does not belong to {weights_path.name}: "
                          "its sha256 differs from the one recorded in the weights file.")
    return _parse_meta(meta_bytes, meta_path), blob, sha, weights_path, meta_path


def load_checkpoint(path: str | Path, expected_sha256: str | None = None,
                    device: torch.device | str = "cpu") -> Checkpoint:
    """Verify a checkpoint and build its network (in eval mode, on `device`).

    Refuses, each with one sentence: a missing or oversized file, a sha256 other than
    `expected_sha256`, a file that is not safetensors (a pickle included: it is never
    unpickled), a truncated or corrupt file, metadata that is missing, not ours, malformed or
    does not belong to the weights, a format, layout or action-table version this code does
    not speak, an architecture beyond the loader's bounds, tensors that do not fit the
    architecture, and optimizer state that does not fit the network. Nothing is allocated for
    the network until the file's tensors have been checked against it.
    """
    meta, blob, sha, weights_path, meta_path = _verified(path, expected_sha256)
    try:
        tensors = load_tensors(blob)  # no larger than the file
    except SafetensorError:
        raise LeagueError(f"{weights_path} is corrupt: its tensors cannot be read.") from None
    outline = _network_outline(meta.architecture, meta_path)
    weights = _model_tensors(outline, tensors, weights_path)
    optimizer_state = _optimizer_state(tensors, meta.optimizer, outline, weights_path)
    net = build_network(meta.architecture)
    net.load_state_dict(weights)
    return Checkpoint(meta, net.to(device).eval(), optimizer_state, sha, weights_path, meta_path)
