"""Read a community bot's tensors from the files it ships with, never unpickling or running them.

Community bots keep their weights in PyTorch's own files, which are pickles: loading one with
`pickle.load`, `torch.load` (without weights_only) or `torch.jit.load` runs whatever callable the
file names. This module reads the same files with a restricted unpickler whose `find_class`
answers only with our own stand-ins (an OrderedDict, tensor and storage records, a neutral record
for TorchScript classes) and refuses every other name, so nothing a file names is ever called.
Storages are read from the raw bytes after size checks; tensors are built only at the end, from
validated records.

Formats read (PyTorch's torch/serialization.py and torch/csrc/jit/serialization describe them):

    plain pickle      a state dict pickled by `pickle.dump` (Element's model.p): each storage is
                      `torch.storage._load_from_bytes(<a legacy stream holding that storage>)`
    legacy stream     `torch.save(..., _use_new_zipfile_serialization=False)`: magic number,
                      protocol version, sys info, the object pickle whose storages are persistent
                      ids ('storage', type, key, location, numel, view), the list of storage keys,
                      then per key an 8-byte little-endian element count and the raw bytes
    zip archive       `torch.save` since 1.6: <archive>/data.pkl, <archive>/data/<key> records
    TorchScript       `torch.jit.save` (Necto's necto-model.pt): a zip archive whose data.pkl holds
                      `__torch__.*` module objects; which attributes are parameters and buffers is
                      read as text from the `__parameters__`/`__buffers__` lines of code/*.py

Everything a bad file can cause ends in CommunityFileError, one sentence naming the file.
"""

from __future__ import annotations

import ast
import io
import math
import pickle
import pickletools
import re
import struct
import zipfile
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from league.errors import LeagueError
from league.files import FileRefused, read_regular

MAX_FILE_BYTES = 256 * 2**20  # far above any community bot's weights (Element 1.2 MB, Necto 0.7 MB)
MAX_MEMO_INDEX = 1 << 20  # a pickle's memo slots; the C unpickler allocates up to the largest index
MAX_MODULE_DEPTH = 64
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001
ZIP_MAGIC = b"PK\x03\x04"

_STORAGE_DTYPES = {
    "DoubleStorage": torch.float64,
    "FloatStorage": torch.float32,
    "HalfStorage": torch.float16,
    "BFloat16Storage": torch.bfloat16,
    "LongStorage": torch.int64,
    "IntStorage": torch.int32,
    "ShortStorage": torch.int16,
    "CharStorage": torch.int8,
    "ByteStorage": torch.uint8,
    "BoolStorage": torch.bool,
}
# Opcodes torch never writes and that reach beyond plain values (extension registry, out-of-band
# buffers, protocol-0 class instantiation): refused before the unpickler sees the stream.
_REFUSED_OPCODES = {"EXT1", "EXT2", "EXT4", "NEXT_BUFFER", "READONLY_BUFFER", "INST", "OBJ"}
_MEMO_OPCODES = {"PUT", "BINPUT", "LONG_BINPUT", "GET", "BINGET", "LONG_BINGET"}


class CommunityFileError(LeagueError):
    """A community bot's weights file that is missing, malformed or not what it should be."""


class _Bad(Exception):
    """Why a file is refused (a clause); turned into one CommunityFileError at the boundary."""


def read_state_dict(path: str | Path, data: bytes | None = None) -> dict[str, torch.Tensor]:
    """The tensors of a state dict saved by torch.save (zip or legacy) or pickled by pickle.dump;
    `data`: the file's bytes when the caller has read them already (read_weights_file)."""
    path = Path(path)
    data = read_weights_file(path) if data is None else data

    def read() -> dict[str, torch.Tensor]:
        if data.startswith(ZIP_MAGIC):
            root = _ZipLoader(data, script=False).load_root()
        else:
            root = _load_pickled_state(data)
        return _state_dict_tensors(root)

    return _guarded(path, read)


def read_torchscript_tensors(path: str | Path, data: bytes | None = None) -> dict[str, torch.Tensor]:
    """Every parameter and buffer of a TorchScript archive, keyed as its module's state_dict();
    `data` as for read_state_dict."""
    path = Path(path)
    data = read_weights_file(path) if data is None else data

    def read() -> dict[str, torch.Tensor]:
        if not data.startswith(ZIP_MAGIC):
            raise _Bad("it is not a zip archive, which every TorchScript file is")
        loader = _ZipLoader(data, script=True)
        root = loader.load_root()
        if not isinstance(root, _ScriptObject):
            raise _Bad(f"its data.pkl holds {_what(root)}, not a TorchScript module")
        out: dict[str, _TensorRef] = {}
        _collect_module_tensors(root, "", out, loader, on_path=set())
        tensors = _Materializer()
        return {k: tensors.tensor(v) for k, v in out.items()}

    return _guarded(path, read)


def _guarded(path: Path, read):
    """Run `read`, turning every failure a file can cause into one CommunityFileError sentence."""
    try:
        return read()
    except _Bad as e:
        reason = str(e)
    except (zipfile.BadZipFile, zlib.error, EOFError) as e:
        reason = f"it is truncated or damaged ({e})" if str(e) else "it is truncated or damaged"
    except pickle.UnpicklingError as e:
        reason = f"its pickle is malformed ({e})"
    except RecursionError:
        reason = "it nests objects too deeply"
    except MemoryError:
        reason = "it asks for more memory than the file could justify"
    except Exception as e:  # noqa: BLE001 (a hostile file may fail anywhere; nothing escapes as a traceback)
        reason = f"it is malformed ({type(e).__name__}: {str(e)[:120]})"
    raise CommunityFileError(f"{path} is not a usable community weights file: {reason.rstrip('.')}.")


def read_weights_file(path: str | Path) -> bytes:
    """The bytes of a weights file, read by the league's file rule (league.files: a regular file of at
    most MAX_FILE_BYTES, never a FIFO or a device); one CommunityFileError sentence otherwise."""
    try:
        data = read_regular(Path(path), MAX_FILE_BYTES, "community weights file")
    except FileRefused as exc:
        raise CommunityFileError(str(exc)) from None
    if not data:
        raise CommunityFileError(f"{path} is empty, not a community weights file.")
    return data


# ---- records the unpickler builds (our own classes only; tensors are made from them at the end)


class _Record:
    """Refuses BUILD (pickle's __setstate__): none of our records takes state from a file."""

    def __setstate__(self, state):
        raise _Bad(f"it sets the state of a {type(self).__name__.strip('_')}, which no weights file does")


@dataclass(eq=False)
class _Storage(_Record):
    """`numel` elements of `dtype`, at byte `offset` of `root.buf` (a view shares its root's buf)."""

    dtype: torch.dtype
    numel: int
    buf: bytearray
    offset: int = 0
    root: _Storage | None = None
    filled: bool = True

    @property
    def nbytes(self) -> int:
        return self.numel * _itemsize(self.dtype)

    @property
    def is_filled(self) -> bool:
        return (self.root or self).filled


@dataclass(eq=False)
class _TensorRef(_Record):
    """What torch._utils._rebuild_tensor_v2 would have built, kept as a record until validated."""

    storage: _Storage
    offset: int
    size: tuple[int, ...]
    stride: tuple[int, ...]


class _StorageType(_Record):
    """A `torch.<X>Storage` name in a pickle: only its dtype matters."""

    def __init__(self, name: str, dtype: torch.dtype):
        self.name, self.dtype = name, dtype


class _ScriptObject:
    """A neutral record for a TorchScript `__torch__.*` object: its class name and its state."""

    qualified_name = "__torch__"
    state = None  # pickle's NEWOBJ makes these without __init__; BUILD sets the state

    def __setstate__(self, state):
        self.state = state


class _StateDict(OrderedDict):
    """collections.OrderedDict as pickles name it; the state torch attaches (_metadata) is dropped."""

    def __setstate__(self, state):
        if not isinstance(state, dict):
            raise _Bad("it gives an OrderedDict a state that is not a dict")


def _itemsize(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_int_tuple(x) -> bool:
    return isinstance(x, (tuple, list)) and all(_is_int(v) for v in x)


def _what(x) -> str:
    if isinstance(x, _TensorRef):
        return "a tensor"
    if isinstance(x, _ScriptObject):
        return f"an object of class {x.qualified_name}"
    return f"a {type(x).__name__}"


def _rebuild_tensor(storage, storage_offset, size, stride, *rest):
    """torch._utils._rebuild_tensor(_v2): checked and recorded, never built from the file's say-so."""
    if not isinstance(storage, _Storage):
        raise _Bad(f"it rebuilds a tensor from {_what(storage)} instead of a storage")
    if not (_is_int(storage_offset) and _is_int_tuple(size) and _is_int_tuple(stride)):
        raise _Bad("it gives a tensor an offset, size or stride that is not made of integers")
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride) or len(size) > 16:
        raise _Bad(f"it gives a tensor {len(size)} sizes and {len(stride)} strides")
    if storage_offset < 0 or any(v < 0 for v in size + stride):
        raise _Bad("it gives a tensor a negative offset, size or stride")
    numel = math.prod(size)
    if numel:
        last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= storage.numel or numel > storage.numel:
            raise _Bad(f"a tensor of size {list(size)} does not fit in its storage of {storage.numel} elements")
    if len(rest) > 3:
        raise _Bad("it rebuilds a tensor with more arguments than torch writes")
    if len(rest) >= 1 and not isinstance(rest[0], bool):
        raise _Bad("it gives a tensor a requires_grad that is not a boolean")
    if len(rest) >= 2 and not (isinstance(rest[1], dict) and not rest[1]):
        raise _Bad("it attaches backward hooks to a tensor")
    return _TensorRef(storage, storage_offset, size, stride)


def _rebuild_parameter(data, requires_grad, backward_hooks, *rest):
    """torch._utils._rebuild_parameter: a parameter is read as its tensor."""
    if not isinstance(data, _TensorRef):
        raise _Bad(f"it makes a parameter of {_what(data)} instead of a tensor")
    if not (isinstance(backward_hooks, dict) and not backward_hooks):
        raise _Bad("it attaches backward hooks to a parameter")
    return data


def _encode(text, encoding="latin1"):
    """_codecs.encode as protocol-2 pickles use it for bytes: latin-1 text to bytes only."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise _Bad("it encodes something other than latin-1 text")
    return text.encode("latin1")


def _typed_list(kind: type):
    def build(items):
        if not isinstance(items, list) or not all(isinstance(v, kind) for v in items):
            raise _Bad(f"it builds a list of {kind.__name__} from other values")
        return list(items)

    return build


def _build_tensorlist(items):
    if not isinstance(items, list) or not all(isinstance(v, _TensorRef) for v in items):
        raise _Bad("it builds a tensor list from other values")
    return list(items)


def _restore_type_tag(value, type_str):
    """torch.jit._pickle.restore_type_tag: the value itself (its TorchScript type is not needed)."""
    if not isinstance(type_str, str):
        raise _Bad("it tags a value with a type that is not a string")
    return value


def _device(name, *rest):
    """torch.device as a string: tensors are always read onto the CPU."""
    if not isinstance(name, str) or rest and not all(_is_int(v) for v in rest):
        raise _Bad("it names a device with something other than a string")
    return name


_COMMON_GLOBALS = {
    ("collections", "OrderedDict"): _StateDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("_codecs", "encode"): _encode,
}
_SCRIPT_GLOBALS = {
    ("torch.jit._pickle", "build_intlist"): _typed_list(int),
    ("torch.jit._pickle", "build_doublelist"): _typed_list(float),
    ("torch.jit._pickle", "build_boollist"): _typed_list(bool),
    ("torch.jit._pickle", "build_tensorlist"): _build_tensorlist,
    ("torch.jit._pickle", "restore_type_tag"): _restore_type_tag,
    ("torch", "device"): _device,
}


# ---- the restricted unpickler


class _Unpickler(pickle.Unpickler):
    """pickle.Unpickler whose every global and persistent id goes through a loader's allowlist."""

    def __init__(self, file, loader):
        super().__init__(file)
        self._loader = loader

    def find_class(self, module, name):
        return self._loader.find_class(module, name)

    def persistent_load(self, pid):
        return self._loader.persistent_load(pid)


def _prescan(buf: io.BytesIO) -> None:
    """Walk one pickle's opcodes without building anything: refuse what torch never writes."""
    start = buf.tell()
    try:
        ops = list(pickletools.genops(buf))
    except ValueError as e:
        raise _Bad(f"its pickle is malformed ({e})") from None
    for op, arg, _pos in ops:
        if op.name in _REFUSED_OPCODES:
            raise _Bad(f"its pickle uses the {op.name} opcode, which weights files never need")
        if op.name in _MEMO_OPCODES and int(arg) > MAX_MEMO_INDEX:
            raise _Bad("its pickle uses an implausibly large memo index")
    buf.seek(start)


class _Loader:
    """The allowlist and storage reader shared by one file's pickles."""

    script = False
    plain = False

    def find_class(self, module, name):
        found = _COMMON_GLOBALS.get((module, name))
        if found is None and self.script:
            found = _SCRIPT_GLOBALS.get((module, name))
        if found is not None:
            return found
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(name, _STORAGE_DTYPES[name])
        if self.plain and (module, name) == ("torch.storage", "_load_from_bytes"):
            return _load_storage_bytes
        if self.script and module.startswith("__torch__.") and name.isidentifier():
            return self.script_class(f"{module}.{name}")
        raise _Bad(f"it refers to {module}.{name}, which the league never loads from a weights file")

    def persistent_load(self, pid):
        raise _Bad("it refers to outside storage where none is allowed")

    def unpickle(self, buf: io.BytesIO):
        _prescan(buf)
        return _Unpickler(buf, self).load()


def _storage_id(pid, length: int) -> tuple[_StorageType, str, int, Any]:
    """The storage type, key, element count and rest of a ('storage', ...) persistent id."""
    if not (isinstance(pid, tuple) and len(pid) == length and pid[0] in ("storage", b"storage")):
        raise _Bad("it refers to a persistent object that is not a storage")
    storage_type, key, location, numel = pid[1:5]
    if not isinstance(storage_type, _StorageType):
        raise _Bad(f"it declares a storage of {_what(storage_type)} instead of a storage type")
    if not isinstance(key, str) or not isinstance(location, (str, bytes)) or not _is_int(numel) or numel < 0:
        raise _Bad("it declares a storage whose key, location or size is malformed")
    return storage_type, key, numel, pid[5:]


class _LegacyLoader(_Loader):
    """A legacy (pre-zip) torch.save stream: storages allocated when named, filled at the end."""

    def __init__(self, buf: io.BytesIO, total: int):
        self.buf, self.total = buf, total
        self.roots: dict[str, _Storage] = {}
        self.allocated = 0

    def persistent_load(self, pid):
        if isinstance(pid, tuple) and pid and pid[0] in ("module", b"module"):
            raise _Bad("it holds a pickled module, not a state dict")
        storage_type, key, numel, (view,) = _storage_id(pid, 6)
        dtype = storage_type.dtype
        root = self.roots.get(key)
        if root is None:
            nbytes = numel * _itemsize(dtype)
            if self.allocated + nbytes > self.total:
                raise _Bad(f"it declares storages of more bytes than the file holds ({self.total})")
            self.allocated += nbytes
            root = self.roots[key] = _Storage(dtype, numel, bytearray(nbytes), filled=False)
        elif root.dtype != dtype or root.numel != numel:
            raise _Bad(f"it declares storage {key} twice with different types or sizes")
        if view is None:
            return root
        if not (isinstance(view, tuple) and len(view) == 3 and _is_int(view[1]) and _is_int(view[2])):
            raise _Bad("it declares a storage view that is malformed")
        _key, offset, count = view
        if offset < 0 or count < 0 or offset + count > root.numel:
            raise _Bad(f"a storage view reaches beyond storage {key}")
        return _Storage(dtype, count, root.buf, offset * _itemsize(dtype), root=root)

    def load(self):
        magic = self.unpickle(self.buf)
        if not (_is_int(magic) and magic == LEGACY_MAGIC):
            raise _Bad("it does not start with PyTorch's magic number")
        protocol = self.unpickle(self.buf)
        if protocol != LEGACY_PROTOCOL:
            raise _Bad(f"it is PyTorch legacy protocol {protocol!r}, not {LEGACY_PROTOCOL}")
        return self.load_after_magic()

    def load_after_magic(self):
        sys_info = self.unpickle(self.buf)
        if not isinstance(sys_info, dict) or sys_info.get("little_endian") is not True:
            raise _Bad("it was not saved on a little-endian machine, which the league does not read")
        result = self.unpickle(self.buf)
        keys = self.unpickle(self.buf)
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise _Bad("its list of storage keys is malformed")
        for key in keys:
            self._fill(key)
        missing = [k for k, s in self.roots.items() if not s.filled]
        if missing:
            raise _Bad(f"storage {missing[0]} has no data in the file")
        left = self.total - self.buf.tell()
        if left:
            raise _Bad(f"it has {left} unexpected bytes after its last storage")
        return result

    def _fill(self, key: str) -> None:
        root = self.roots.get(key)
        if root is None or root.filled:
            raise _Bad(f"it lists storage {key} that it never declared, or lists it twice")
        head = self.buf.read(8)
        if len(head) != 8:
            raise _Bad(f"it ends before the data of storage {key}")
        (count,) = struct.unpack("<q", head)
        if count != root.numel:
            raise _Bad(f"storage {key} holds {count} elements where {root.numel} were declared")
        data = self.buf.read(root.nbytes)
        if len(data) != root.nbytes:
            raise _Bad(f"it ends inside the data of storage {key}")
        root.buf[:] = data
        root.filled = True


def _load_storage_bytes(data):
    """torch.storage._load_from_bytes: one storage from an embedded legacy stream, read by us."""
    if not isinstance(data, bytes):
        raise _Bad("it loads a storage from something other than bytes")
    storage = _LegacyLoader(io.BytesIO(data), len(data)).load()
    if not isinstance(storage, _Storage):
        raise _Bad(f"an embedded storage holds {_what(storage)} instead of a storage")
    return storage


class _PlainLoader(_Loader):
    """A pickle stream that is either a legacy torch.save or a state dict pickled directly."""

    plain = True


def _load_pickled_state(data: bytes):
    buf = io.BytesIO(data)
    first = _PlainLoader().unpickle(buf)
    if _is_int(first):
        if first != LEGACY_MAGIC:
            raise _Bad("it does not start with PyTorch's magic number")
        legacy = _LegacyLoader(buf, len(data))
        if legacy.unpickle(buf) != LEGACY_PROTOCOL:
            raise _Bad(f"its PyTorch legacy protocol is not {LEGACY_PROTOCOL}")
        return legacy.load_after_magic()
    left = len(data) - buf.tell()
    if left:
        raise _Bad(f"it has {left} unexpected bytes after its pickle")
    return first


class _ZipLoader(_Loader):
    """A zip archive of torch.save or torch.jit.save: data.pkl plus one record per storage."""

    def __init__(self, data: bytes, script: bool):
        self.script = script
        self.zip = zipfile.ZipFile(io.BytesIO(data))
        self.names = set(self.zip.namelist())
        pkls = [n for n in self.names if n.count("/") == 1 and n.endswith("/data.pkl")]
        if len(pkls) != 1:
            raise _Bad("its zip archive does not hold exactly one <archive>/data.pkl")
        self.prefix = pkls[0][: -len("/data.pkl")]
        self.storages: dict[str, _Storage] = {}
        self.classes: dict[str, type] = {}
        self.code: dict[str, str] = {}
        order = self._optional_record("byteorder")
        if order not in (None, b"little", b"big"):
            raise _Bad("its byteorder record is neither little nor big")
        self.swap = order == b"big"

    def record(self, name: str) -> bytes:
        full = f"{self.prefix}/{name}"
        try:
            info = self.zip.getinfo(full)
        except KeyError:
            raise _Bad(f"its zip archive has no record {full}") from None
        if info.file_size > MAX_FILE_BYTES:
            raise _Bad(f"its record {full} claims {info.file_size} bytes")
        with self.zip.open(info) as f:
            data = f.read(info.file_size + 1)  # reading to the end makes zipfile check the CRC
        if len(data) != info.file_size:
            raise _Bad(f"its record {full} is not the size its directory says")
        return data

    def _optional_record(self, name: str) -> bytes | None:
        if f"{self.prefix}/{name}" not in self.names:
            return None
        return self.record(name)

    def load_root(self):
        return self.unpickle(io.BytesIO(self.record("data.pkl")))

    def persistent_load(self, pid):
        storage_type, key, numel, _ = _storage_id(pid, 5)
        dtype = storage_type.dtype
        known = self.storages.get(key)
        if known is not None:
            if known.dtype != dtype or known.numel != numel:
                raise _Bad(f"it declares storage {key} twice with different types or sizes")
            return known
        if "/" in key or key in ("", ".", ".."):
            raise _Bad(f"it names storage {key!r}, which is not a record name")
        nbytes = numel * _itemsize(dtype)
        if nbytes > MAX_FILE_BYTES:
            raise _Bad(f"storage {key} claims {numel} elements")
        data = self.record(f"data/{key}")
        if len(data) != nbytes:
            raise _Bad(f"storage {key} has {len(data)} bytes where {numel} elements need {nbytes}")
        buf = bytearray(data)
        if self.swap and nbytes:
            size = _itemsize(dtype)
            swapped = np.frombuffer(buf, np.uint8).reshape(-1, size)[:, ::-1]
            buf = bytearray(swapped.tobytes())
        storage = self.storages[key] = _Storage(dtype, numel, buf)
        return storage

    def script_class(self, qualified_name: str) -> type:
        cls = self.classes.get(qualified_name)
        if cls is None:
            cls = type("ScriptObject", (_ScriptObject,), {"qualified_name": qualified_name})
            self.classes[qualified_name] = cls
        return cls

    def declaration(self, qualified_name: str) -> tuple[bool, list[str], list[str]]:
        """(is a Module, __parameters__, __buffers__) of a class, read as text from code/."""
        module, _, name = qualified_name.rpartition(".")
        path = "code/" + module.replace(".", "/") + ".py"
        if path not in self.code:
            self.code[path] = self.record(path).decode("utf-8")
        lines = self.code[path].splitlines()
        header = re.compile(rf"class {re.escape(name)}\((\w+)\):\s*$")
        for i, line in enumerate(lines):
            match = header.match(line)
            if match:
                return match.group(1) == "Module", *self._declared_lists(lines[i + 1 :], qualified_name)
        raise _Bad(f"its code does not declare class {qualified_name}")

    @staticmethod
    def _declared_lists(body: list[str], qualified_name: str) -> tuple[list[str], list[str]]:
        found: dict[str, list[str]] = {"__parameters__": [], "__buffers__": []}
        for line in body:
            if line.strip() and not line.startswith((" ", "\t")):
                break
            match = re.match(r"\s+(__parameters__|__buffers__) = (\[.*\])\s*$", line)
            if match:
                try:
                    names = ast.literal_eval(match.group(2))
                except (ValueError, SyntaxError):
                    names = None
                if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                    raise _Bad(f"its code declares the {match.group(1)} of {qualified_name} unreadably")
                found[match.group(1)] = names
        return found["__parameters__"], found["__buffers__"]


# ---- from records to tensors


def _state_dict_tensors(root) -> dict[str, torch.Tensor]:
    if not isinstance(root, dict):
        raise _Bad(f"its top level is {_what(root)}, not a dict of tensors")
    tensors = _Materializer()
    out = {}
    for key, value in root.items():
        if not isinstance(key, str):
            raise _Bad(f"its top level has a key {_what(key)}, not a name")
        if not isinstance(value, _TensorRef):
            raise _Bad(f"its entry {key!r} is {_what(value)}, not a tensor")
        out[key] = tensors.tensor(value)
    return out


def _collect_module_tensors(obj: _ScriptObject, prefix: str, out: dict, loader: _ZipLoader, on_path: set) -> None:
    """state_dict() order: this module's parameters, then its buffers, then each submodule's."""
    if id(obj) in on_path or len(on_path) >= MAX_MODULE_DEPTH:
        raise _Bad(f"module {prefix.rstrip('.') or '<root>'} contains itself or nests too deeply")
    state = obj.state
    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        raise _Bad(f"module {prefix.rstrip('.') or '<root>'} has a state that is not a dict of attributes")
    _, parameters, buffers = loader.declaration(obj.qualified_name)
    for names in (parameters, buffers):
        for name in names:
            if name not in state:
                raise _Bad(f"module {prefix.rstrip('.') or '<root>'} declares {name} but does not hold it")
            value = state[name]
            if value is None:
                continue  # an absent optional parameter (Linear without bias): not in state_dict
            if not isinstance(value, _TensorRef):
                raise _Bad(f"{prefix}{name} is {_what(value)}, not a tensor")
            out[prefix + name] = value
    on_path = on_path | {id(obj)}
    for name, value in state.items():
        if isinstance(value, _ScriptObject) and loader.declaration(value.qualified_name)[0]:
            _collect_module_tensors(value, f"{prefix}{name}.", out, loader, on_path)


class _Materializer:
    """Builds each validated tensor record once (records shared in the pickle stay shared)."""

    def __init__(self):
        self.done: dict[int, torch.Tensor] = {}

    def tensor(self, ref: _TensorRef) -> torch.Tensor:
        found = self.done.get(id(ref))
        if found is not None:
            return found
        storage = ref.storage
        if not storage.is_filled:
            raise _Bad("a tensor's storage has no data in the file")
        if storage.numel == 0:
            base = torch.empty(0, dtype=storage.dtype)
        else:
            base = torch.frombuffer(storage.buf, dtype=storage.dtype, count=storage.numel, offset=storage.offset)
        tensor = torch.as_strided(base, ref.size, ref.stride, ref.offset)
        self.done[id(ref)] = tensor
        return tensor


def check_tensors(tensors: object, expected: dict[str, tuple[int, ...]], bot: str) -> None:
    """Refuse, in one sentence, a tensors dict that is not exactly `bot`'s network: every name of
    `expected` present with its shape, float32 and finite, and no other name."""
    if not isinstance(tensors, dict):
        raise CommunityFileError(f"{bot}'s weights must be a dict of tensors, not a {type(tensors).__name__}.")
    for name, shape in expected.items():
        if name not in tensors:
            raise CommunityFileError(f"{bot}'s weights lack the tensor {name!r} (float32 {list(shape)}).")
        tensor = tensors[name]
        if not isinstance(tensor, torch.Tensor) or tensor.dtype != torch.float32 or tuple(tensor.shape) != shape:
            got = f"{tensor.dtype} {list(tensor.shape)}" if isinstance(tensor, torch.Tensor) else type(tensor).__name__
            raise CommunityFileError(f"{bot}'s tensor {name!r} is {got} where float32 {list(shape)} was expected.")
        if not torch.isfinite(tensor).all():
            raise CommunityFileError(f"{bot}'s tensor {name!r} holds values that are not finite.")
    extra = sorted(map(str, set(tensors) - set(expected)))
    if extra:
        raise CommunityFileError(f"{bot}'s weights have tensors no {bot} model has: {', '.join(extra[:3])}.")
