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
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import secrets
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
from league.config import PolicyConfig, validate
from league.errors import LeagueError

FORMAT_NAME = "rl-league-checkpoint"
FORMAT_VERSION = 1
# Architecture fields added after format 1 shipped, with the value that files written before them meant.
ARCHITECTURE_ADDED_FIELDS = {"car_frame": False}
WEIGHTS_SUFFIX = ".safetensors"
META_SUFFIX = ".json"
MODEL_PREFIX = "model/"
OPTIMIZER_PREFIX = "optimizer/"
# A safetensors header is a few KiB; anything claiming more than this is not one of ours.
MAX_HEADER_BYTES = 100 * 1024 * 1024
HASH_CHUNK_BYTES = 1 << 20

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
    elif path.suffix and path.is_file():
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


def _finite_tensors(prefix: str, tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    out = {}
    for name, tensor in tensors.items():
        tensor = tensor.detach().to("cpu").contiguous()
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise LeagueError(f"Refusing to save a checkpoint: tensor {name!r} contains NaN or infinite values.")
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


def write_file_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary file in the same folder, flush it to disk, then rename over `path`.

    The temporary file is opened like any new file (mode 0666 less the umask), so the result
    has the permissions a plain write would give it.
    """
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        with open(tmp, "xb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_checkpoint(path: str | Path, tensors: dict[str, torch.Tensor], meta: dict[str, Any]) -> str:
    """Write a checkpoint pair from prefixed tensors and the metadata's JSON form; returns its sha256.

    The low-level writer behind `save_checkpoint` (which builds both arguments from a network).
    """
    weights_path, meta_path = checkpoint_paths(path)
    weights_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        meta_bytes = (json.dumps(meta, indent=2, sort_keys=True, allow_nan=False) + "\n").encode()
    except (TypeError, ValueError):
        raise LeagueError("Refusing to save a checkpoint: its metadata cannot be written as JSON.") from None
    blob = _safetensors_bytes(tensors, sha256_bytes(meta_bytes))
    # Metadata first: a crash between the two renames leaves a pair whose hashes disagree,
    # which loading refuses, never a pair that silently mis-reads.
    write_file_atomic(meta_path, meta_bytes)
    write_file_atomic(weights_path, blob)
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
) -> str:
    """Write NAME.safetensors and NAME.json atomically; returns the checkpoint's sha256.

    `optimizer` is an Optimizer or its state_dict(); its tensors go into the safetensors
    file and its settings into the JSON, with `learner_stats` (the learner's running
    statistics, numbers only) beside them. Non-finite weights are refused.
    """
    tensors = _finite_tensors(MODEL_PREFIX, net.state_dict())
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
    return write_checkpoint(path, tensors, meta.to_json())


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
    if meta["format_version"] > FORMAT_VERSION:
        raise LeagueError(f"{where} uses checkpoint format version {meta['format_version']}, newer than this "
                          f"rl-league reads ({FORMAT_VERSION}); upgrade rl-league.")
    if meta["obs_layout_version"] != OBS_LAYOUT_VERSION:
        raise LeagueError(f"{where} was trained for observation layout version {meta['obs_layout_version']}, but "
                          f"this rl-league speaks version {OBS_LAYOUT_VERSION}, so it cannot be used.")
    if meta["action_table_version"] != ACTION_TABLE_VERSION:
        raise LeagueError(f"{where} was trained for action table version {meta['action_table_version']}, but "
                          f"this rl-league speaks version {ACTION_TABLE_VERSION}, so it cannot be used.")


def _parse_meta(meta_bytes: bytes, where: Path) -> CheckpointMeta:
    try:
        meta = json.loads(meta_bytes)
    except (UnicodeDecodeError, ValueError):
        raise LeagueError(f"Checkpoint metadata {where} is not valid JSON.") from None
    if not isinstance(meta, dict):
        raise LeagueError(f"Checkpoint metadata {where} must be a JSON object.")
    for key, types in REQUIRED_FIELDS.items():
        if key not in meta:
            raise LeagueError(f"Checkpoint metadata {where} is missing the field {key!r}.")
        if not isinstance(meta[key], types) or isinstance(meta[key], bool):
            raise LeagueError(f"Checkpoint metadata {where} has a malformed field {key!r}.")
    _check_versions(meta, where)
    meta["architecture"] = {**ARCHITECTURE_ADDED_FIELDS, **meta["architecture"]}
    missing = [f.name for f in dataclasses.fields(PolicyConfig) if f.name not in meta["architecture"]]
    if missing:
        raise LeagueError(f"Checkpoint metadata {where} has an architecture without {missing[0]!r}.")
    validate(PolicyConfig, meta["architecture"], f"{where} (architecture)")
    architecture = PolicyConfig(**meta["architecture"])
    if architecture.kind != meta["kind"]:
        raise LeagueError(f"Checkpoint metadata {where} says kind {meta['kind']!r} but its architecture is "
                          f"{architecture.kind!r}.")
    return CheckpointMeta(
        kind=meta["kind"], architecture=architecture, steps=meta["steps"], training_config=meta["training_config"],
        optimizer=meta["optimizer"], obs_layout_version=meta["obs_layout_version"],
        action_table_version=meta["action_table_version"], created=str(meta.get("created", "")),
        notes=str(meta.get("notes", "")), format_version=meta["format_version"],
    )


def _fill_network(net: ActorCritic, tensors: dict[str, torch.Tensor], where: Path) -> None:
    """Load the model tensors into `net`, refusing missing, extra, misshapen or non-finite ones."""
    expected = net.state_dict()
    found = {k[len(MODEL_PREFIX):]: v for k, v in tensors.items() if k.startswith(MODEL_PREFIX)}
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    if missing or extra:
        name = missing[0] if missing else extra[0]
        what = "lacks" if missing else "has an unexpected"
        raise LeagueError(f"{where} does not match its architecture: it {what} tensor {name!r}.")
    for name, tensor in found.items():
        if tuple(tensor.shape) != tuple(expected[name].shape):
            raise LeagueError(f"{where} does not match its architecture: tensor {name!r} has shape "
                              f"{list(tensor.shape)} but the architecture needs {list(expected[name].shape)}.")
        if not tensor.is_floating_point() or not bool(torch.isfinite(tensor).all()):
            raise LeagueError(f"{where} is unusable: tensor {name!r} holds non-finite or non-float values.")
    net.load_state_dict({k: v.to(expected[k].dtype) for k, v in found.items()})


def _optimizer_state(tensors: dict[str, torch.Tensor], json_part: dict[str, Any] | None,
                     where: Path) -> dict[str, Any] | None:
    if json_part is None:
        return None
    state: dict[int, dict[str, Any]] = {}
    try:
        for key, tensor in tensors.items():
            if key.startswith(OPTIMIZER_PREFIX):
                param, name = key[len(OPTIMIZER_PREFIX):].split("/", 1)
                state.setdefault(int(param), {})[name] = tensor
        for param, entries in json_part.get("scalars", {}).items():
            state.setdefault(int(param), {}).update(entries)
        return {"state": state, "param_groups": list(json_part["param_groups"])}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise LeagueError(f"{where} has a malformed optimizer state.") from None


def load_checkpoint(path: str | Path, expected_sha256: str | None = None,
                    device: torch.device | str = "cpu") -> Checkpoint:
    """Verify a checkpoint and build its network (in eval mode, on `device`).

    Refuses, each with one sentence: a missing file, a sha256 other than `expected_sha256`,
    a file that is not safetensors (a pickle included: it is never unpickled), a truncated or
    corrupt file, metadata that is missing, not ours or does not belong to the weights, a
    format, layout or action-table version this code does not speak, and tensors that do
    not fit the architecture.
    """
    weights_path, meta_path = checkpoint_paths(path)
    if not weights_path.is_file():
        raise LeagueError(f"No checkpoint file at {weights_path}.")
    blob = weights_path.read_bytes()
    sha = sha256_bytes(blob)
    if expected_sha256 is not None and sha != expected_sha256.lower():
        raise LeagueError(f"{weights_path} has sha256 {sha[:16]}…, not the expected {expected_sha256[:16]}…; "
                          "the file was changed or damaged since it was recorded.")
    info = _read_header(blob, weights_path)
    if sha256_bytes(_data_section(blob)) != info["data_sha256"]:
        raise LeagueError(f"{weights_path} is truncated or corrupt: its tensor data does not match the checksum in its header.")
    if not meta_path.is_file():
        raise LeagueError(f"{weights_path} has no metadata file {meta_path.name} beside it; "
                          "a checkpoint is the .safetensors file together with its .json.")
    meta_bytes = meta_path.read_bytes()
    if sha256_bytes(meta_bytes) != info["metadata_sha256"]:
        raise LeagueError(f"{meta_path} does not belong to {weights_path.name}: "
                          "its sha256 differs from the one recorded in the weights file.")
    meta = _parse_meta(meta_bytes, meta_path)
    try:
        tensors = load_tensors(blob)
    except SafetensorError:
        raise LeagueError(f"{weights_path} is corrupt: its tensors cannot be read.") from None
    net = build_network(meta.architecture)
    _fill_network(net, tensors, weights_path)
    optimizer_state = _optimizer_state(tensors, meta.optimizer, weights_path)
    return Checkpoint(meta, net.to(device).eval(), optimizer_state, sha, weights_path, meta_path)
