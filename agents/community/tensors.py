"""Read a community bot's tensors from the files it ships with, never unpickling or running them.

Community bots keep their weights in PyTorch's own files, which are pickles: loading one with
`pickle.load`, `torch.load` (without weights_only) or `torch.jit.load` runs whatever callable the
file names. This module reads the same files with a restricted unpickler whose `find_class`
answers only with our own stand-ins (an OrderedDict, tensor and storage records, a neutral record
for TorchScript classes) and refuses every other name, so nothing a file names is ever called.
Storages are read from the raw bytes after size checks; tensors are built only at the end, from
validated records. What a file can make the reader do (bytes, opcodes, nesting) is bounded by its
size before it is done (agents/community/pickle_scan.py).

The two formats the adapters read (PyTorch's torch/serialization.py and
torch/csrc/jit/serialization describe them); anything else is refused:

    plain pickle      a state dict pickled by `pickle.dump` (Element's model.p): each storage is
                      `torch.storage._load_from_bytes(<a legacy stream holding that storage>)`, the
                      stream being magic number, protocol version, sys info, the storage's pickle
                      (a persistent id ('storage', type, key, location, numel, view)), the list of
                      storage keys, then per key an 8-byte little-endian element count and the bytes
    TorchScript       `torch.jit.save` (Necto's necto-model.pt): a zip archive whose
                      <archive>/data.pkl holds `__torch__.*` module objects and whose
                      <archive>/data/<key> records hold the storages; which attributes are
                      parameters and buffers is read as text from the `__parameters__`/`__buffers__`
                      lines of code/*.py

Everything a bad file can cause ends in CommunityFileError, one sentence naming the file.
"""

from __future__ import annotations

import ast
import io
import math
import pickle
import re
import struct
import zipfile
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from agents.community.pickle_scan import FileBudget, Refused
from league.config_tree import show
from league.errors import LeagueError
from league.files import FileRefused, read_regular

MAX_FILE_BYTES = 256 * 2**20  # far above any community bot's weights (Element 1.2 MB, Necto 0.7 MB)
MAX_MODULE_DEPTH = 64
MAX_MODULES = 10_000  # modules in one TorchScript archive (Necto's has 24)
MAX_NAME_CHARS = 256  # a tensor's or a module's name, or a class's qualified name
MAX_ZIP_DIRECTORY_BYTES = 2**20  # the zip's central directory (Necto's is 9 KB): bounds its entries
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001
ZIP_MAGIC = b"PK\x03\x04"
_STORED, _DEFLATED = zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED

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


class CommunityFileError(LeagueError):
    """A community bot's weights file that is missing, malformed or not what it should be."""


def read_state_dict(path: str | Path, data: bytes | None = None) -> dict[str, torch.Tensor]:
    """The tensors of a state dict pickled by pickle.dump with legacy storage blobs (Element's
    model.p); `data`: the file's bytes when the caller has read them already (read_weights_file)."""
    path = Path(path)
    data = read_weights_file(path) if data is None else data

    def read() -> dict[str, torch.Tensor]:
        if data.startswith(ZIP_MAGIC):
            raise Refused("it is a zip archive (torch.save's format), not a state dict pickled as Element's model.p is")
        return _state_dict_tensors(_PlainLoader(FileBudget(len(data))).load(data))

    return _guarded(path, read)


def read_torchscript_tensors(path: str | Path, data: bytes | None = None) -> dict[str, torch.Tensor]:
    """Every parameter and buffer of a TorchScript archive, keyed as its module's state_dict();
    `data` as for read_state_dict."""
    path = Path(path)
    data = read_weights_file(path) if data is None else data

    def read() -> dict[str, torch.Tensor]:
        if not data.startswith(ZIP_MAGIC):
            raise Refused("it is not a zip archive, which every TorchScript file is")
        loader = _ScriptLoader(data, FileBudget(len(data)))
        root = loader.load_root()
        if not isinstance(root, _ScriptObject):
            raise Refused(f"its data.pkl holds {_what(root)}, not a TorchScript module")
        tensors = _Materializer()
        return {k: tensors.tensor(v) for k, v in _module_tensors(root, loader).items()}

    return _guarded(path, read)


def _guarded(path: Path, read):
    """Run `read`, turning every failure a file can cause into one CommunityFileError sentence."""
    try:
        return read()
    except Refused as e:
        reason = str(e)
    except (zipfile.BadZipFile, zlib.error, EOFError) as e:
        reason = f"it is truncated or damaged ({str(e)[:120]})" if str(e) else "it is truncated or damaged"
    except pickle.UnpicklingError as e:
        reason = f"its pickle is malformed ({str(e)[:120]})"
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


def _name(text: Any, what: str) -> str:
    """A name the file gives (a tensor, a module, a class): a string of at most MAX_NAME_CHARS."""
    if not isinstance(text, str):
        raise Refused(f"it names {what} with {_what(text)} instead of a string")
    if len(text) > MAX_NAME_CHARS:
        raise Refused(f"it names {what} with {len(text)} characters ({show(text)}), more than {MAX_NAME_CHARS}")
    return text


# ---- records the unpickler builds (our own classes only; tensors are made from them at the end)


class _Record:
    """Refuses BUILD (pickle's __setstate__): none of our records takes state from a file."""

    def __setstate__(self, state):
        raise Refused(f"it sets the state of a {type(self).__name__.strip('_')}, which no weights file does")


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
            raise Refused("it gives an OrderedDict a state that is not a dict")


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
    """torch._utils._rebuild_tensor_v2: checked and recorded, never built from the file's say-so."""
    if not isinstance(storage, _Storage):
        raise Refused(f"it rebuilds a tensor from {_what(storage)} instead of a storage")
    if not (_is_int(storage_offset) and _is_int_tuple(size) and _is_int_tuple(stride)):
        raise Refused("it gives a tensor an offset, size or stride that is not made of integers")
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride) or len(size) > 16:
        raise Refused(f"it gives a tensor {len(size)} sizes and {len(stride)} strides")
    if storage_offset < 0 or any(v < 0 for v in size + stride):
        raise Refused("it gives a tensor a negative offset, size or stride")
    numel = math.prod(size)
    if numel:
        last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= storage.numel or numel > storage.numel:
            raise Refused(f"a tensor of size {show(list(size))} does not fit in its storage of {storage.numel} elements")
    if len(rest) > 3:
        raise Refused("it rebuilds a tensor with more arguments than torch writes")
    if len(rest) >= 1 and not isinstance(rest[0], bool):
        raise Refused("it gives a tensor a requires_grad that is not a boolean")
    if len(rest) >= 2 and not (isinstance(rest[1], dict) and not rest[1]):
        raise Refused("it attaches backward hooks to a tensor")
    return _TensorRef(storage, storage_offset, size, stride)


_COMMON_GLOBALS = {
    ("collections", "OrderedDict"): _StateDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
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


class _Loader:
    """The allowlist and the budget shared by one file's pickles."""

    def __init__(self, budget: FileBudget):
        self.budget = budget

    def find_class(self, module, name):
        found = _COMMON_GLOBALS.get((module, name))
        if found is not None:
            return found
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(name, _STORAGE_DTYPES[name])
        found = self.own_class(module, name)
        if found is not None:
            return found
        raise Refused(f"it refers to {show(module)}.{show(name)}, which the league never loads from a weights file")

    def own_class(self, module: str, name: str):
        """A global only this loader's format uses, or None."""
        return None

    def persistent_load(self, pid):
        raise Refused("it refers to outside storage where none is allowed")

    def unpickle(self, buf: io.BytesIO):
        self.budget.prescan(buf)
        return _Unpickler(buf, self).load()


def _storage_id(pid, length: int) -> tuple[_StorageType, str, int, Any]:
    """The storage type, key, element count and rest of a ('storage', ...) persistent id."""
    if not (isinstance(pid, tuple) and len(pid) == length and pid[0] in ("storage", b"storage")):
        raise Refused("it refers to a persistent object that is not a storage")
    storage_type, key, location, numel = pid[1:5]
    if not isinstance(storage_type, _StorageType):
        raise Refused(f"it declares a storage of {_what(storage_type)} instead of a storage type")
    if not isinstance(location, (str, bytes)) or not _is_int(numel) or numel < 0:
        raise Refused("it declares a storage whose location or size is malformed")
    return storage_type, _name(key, "a storage"), numel, pid[5:]


class _PlainLoader(_Loader):
    """A state dict pickled directly whose storages are embedded legacy streams (Element's model.p).
    Each distinct embedded stream is read once: a memo reference to the same bytes gets the same
    storage back, never a fresh copy."""

    def __init__(self, budget: FileBudget):
        super().__init__(budget)
        self.read_blobs: dict[int, tuple[bytes, _Storage]] = {}

    def load(self, data: bytes):
        buf = io.BytesIO(data)
        root = self.unpickle(buf)
        if _is_int(root) and root == LEGACY_MAGIC:
            raise Refused("it is a legacy torch.save stream, not a state dict pickled as Element's model.p is")
        left = len(data) - buf.tell()
        if left:
            raise Refused(f"it has {left} unexpected bytes after its pickle")
        return root

    def own_class(self, module, name):
        return self.load_storage_bytes if (module, name) == ("torch.storage", "_load_from_bytes") else None

    def load_storage_bytes(self, data):
        """torch.storage._load_from_bytes: one storage from an embedded legacy stream, read by us."""
        if not isinstance(data, bytes):
            raise Refused("it loads a storage from something other than bytes")
        known = self.read_blobs.get(id(data))
        if known is not None and known[0] is data:
            return known[1]
        storage = _LegacyStream(io.BytesIO(data), len(data), self).load()
        if not isinstance(storage, _Storage):
            raise Refused(f"an embedded storage holds {_what(storage)} instead of a storage")
        self.read_blobs[id(data)] = (data, storage)  # holding `data` keeps its id from being reused
        return storage


class _LegacyStream(_Loader):
    """One embedded legacy torch.save stream: storages allocated when named, filled at the end."""

    def __init__(self, buf: io.BytesIO, total: int, file: _Loader):
        super().__init__(file.budget)
        self.buf, self.total = buf, total
        self.roots: dict[str, _Storage] = {}
        self.allocated = 0

    def persistent_load(self, pid):
        if isinstance(pid, tuple) and pid and pid[0] in ("module", b"module"):
            raise Refused("it holds a pickled module, not a state dict")
        storage_type, key, numel, (view,) = _storage_id(pid, 6)
        dtype = storage_type.dtype
        root = self.roots.get(key)
        if root is None:
            nbytes = numel * _itemsize(dtype)
            if self.allocated + nbytes > self.total:
                raise Refused(f"it declares storages of more bytes than the file holds ({self.total})")
            self.budget.spend_bytes(nbytes, f"storage {show(key)}")
            self.allocated += nbytes
            root = self.roots[key] = _Storage(dtype, numel, bytearray(nbytes), filled=False)
        elif root.dtype != dtype or root.numel != numel:
            raise Refused(f"it declares storage {show(key)} twice with different types or sizes")
        if view is None:
            return root
        if not (isinstance(view, tuple) and len(view) == 3 and _is_int(view[1]) and _is_int(view[2])):
            raise Refused("it declares a storage view that is malformed")
        _key, offset, count = view
        if offset < 0 or count < 0 or offset + count > root.numel:
            raise Refused(f"a storage view reaches beyond storage {show(key)}")
        return _Storage(dtype, count, root.buf, offset * _itemsize(dtype), root=root)

    def load(self):
        magic = self.unpickle(self.buf)
        if not (_is_int(magic) and magic == LEGACY_MAGIC):
            raise Refused("an embedded storage does not start with PyTorch's magic number")
        protocol = self.unpickle(self.buf)
        if protocol != LEGACY_PROTOCOL:
            raise Refused(f"an embedded storage is PyTorch legacy protocol {show(protocol)}, not {LEGACY_PROTOCOL}")
        sys_info = self.unpickle(self.buf)
        if not isinstance(sys_info, dict) or sys_info.get("little_endian") is not True:
            raise Refused("it was not saved on a little-endian machine, which the league does not read")
        result = self.unpickle(self.buf)
        keys = self.unpickle(self.buf)
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise Refused("its list of storage keys is malformed")
        for key in keys:
            self._fill(key)
        missing = [k for k, s in self.roots.items() if not s.filled]
        if missing:
            raise Refused(f"storage {show(missing[0])} has no data in the file")
        left = self.total - self.buf.tell()
        if left:
            raise Refused(f"it has {left} unexpected bytes after its last storage")
        return result

    def _fill(self, key: str) -> None:
        root = self.roots.get(key)
        if root is None or root.filled:
            raise Refused(f"it lists storage {show(key)} that it never declared, or lists it twice")
        head = self.buf.read(8)
        if len(head) != 8:
            raise Refused(f"it ends before the data of storage {show(key)}")
        (count,) = struct.unpack("<q", head)
        if count != root.numel:
            raise Refused(f"storage {show(key)} holds {count} elements where {root.numel} were declared")
        if self.buf.readinto(root.buf) != root.nbytes:
            raise Refused(f"it ends inside the data of storage {show(key)}")
        root.filled = True


class _ScriptLoader(_Loader):
    """A TorchScript archive: data.pkl plus one record per storage, and code/ declaring the classes.
    Every record read is charged to the file's budget before it is inflated."""

    def __init__(self, data: bytes, budget: FileBudget):
        super().__init__(budget)
        _check_zip_directory(data)
        self.zip = zipfile.ZipFile(io.BytesIO(data))
        self.names = set(self.zip.namelist())
        pkls = [n for n in self.names if n.count("/") == 1 and n.endswith("/data.pkl")]
        if len(pkls) != 1:
            raise Refused("its zip archive does not hold exactly one <archive>/data.pkl")
        self.prefix = pkls[0][: -len("/data.pkl")]
        self.storages: dict[str, _Storage] = {}
        self.classes: dict[str, type] = {}
        self.declared: dict[str, dict[str, tuple[bool, list[str], list[str]]]] = {}
        order = self._optional_record("byteorder")
        if order not in (None, b"little"):
            raise Refused("its byteorder record is not little, the only order the league reads")

    def record(self, name: str) -> bytes:
        full = f"{self.prefix}/{name}"
        try:
            info = self.zip.getinfo(full)
        except KeyError:
            raise Refused(f"its zip archive has no record {show(full)}") from None
        if info.compress_type not in (_STORED, _DEFLATED):
            raise Refused(f"its record {show(full)} is compressed by method {info.compress_type}, which TorchScript never uses")
        self.budget.spend_bytes(info.file_size, f"its record {show(full)}")
        with self.zip.open(info) as f:
            data = f.read(info.file_size + 1)  # reading to the end makes zipfile check the CRC
        if len(data) != info.file_size:
            raise Refused(f"its record {show(full)} is not the size its directory says")
        return data

    def _optional_record(self, name: str) -> bytes | None:
        if f"{self.prefix}/{name}" not in self.names:
            return None
        return self.record(name)

    def load_root(self):
        return self.unpickle(io.BytesIO(self.record("data.pkl")))

    def own_class(self, module, name):
        if module.startswith("__torch__.") and name.isidentifier():
            return self.script_class(_name(f"{module}.{name}", "a class"))
        return None

    def persistent_load(self, pid):
        storage_type, key, numel, _ = _storage_id(pid, 5)
        dtype = storage_type.dtype
        known = self.storages.get(key)
        if known is not None:
            if known.dtype != dtype or known.numel != numel:
                raise Refused(f"it declares storage {show(key)} twice with different types or sizes")
            return known
        if "/" in key or key in ("", ".", ".."):
            raise Refused(f"it names storage {show(key)}, which is not a record name")
        nbytes = numel * _itemsize(dtype)
        if nbytes > MAX_FILE_BYTES:
            raise Refused(f"storage {show(key)} claims {numel} elements")
        data = self.record(f"data/{key}")
        if len(data) != nbytes:
            raise Refused(f"storage {show(key)} has {len(data)} bytes where {numel} elements need {nbytes}")
        storage = self.storages[key] = _Storage(dtype, numel, bytearray(data))
        return storage

    def script_class(self, qualified_name: str) -> type:
        cls = self.classes.get(qualified_name)
        if cls is None:
            cls = type("ScriptObject", (_ScriptObject,), {"qualified_name": qualified_name})
            self.classes[qualified_name] = cls
        return cls

    def declaration(self, qualified_name: str) -> tuple[bool, list[str], list[str]]:
        """(is a Module, __parameters__, __buffers__) of a class, read as text from code/ (each code
        file read and parsed once)."""
        module, _, name = qualified_name.rpartition(".")
        path = "code/" + module.replace(".", "/") + ".py"
        classes = self.declared.get(path)
        if classes is None:
            classes = self.declared[path] = _declared_classes(self.record(path).decode("utf-8"), module)
        found = classes.get(name)
        if found is None:
            raise Refused(f"its code does not declare class {show(qualified_name)}")
        return found


def _check_zip_directory(data: bytes) -> None:
    """Refuse a zip whose central directory (where zipfile makes one record per entry before
    anything else is checked) is larger than MAX_ZIP_DIRECTORY_BYTES, read as zipfile reads it:
    the end record, or the zip64 end record right before its locator."""
    end = data.rfind(b"PK\x05\x06", max(0, len(data) - 22 - 0xFFFF))
    if end < 0:
        raise Refused("its zip archive has no end-of-directory record")
    size = int.from_bytes(data[end + 12 : end + 16], "little")
    locator = end - 20
    if locator >= 56 and data[locator : locator + 4] == b"PK\x06\x07":
        size = int.from_bytes(data[locator - 56 + 40 : locator - 56 + 48], "little")
    if size > MAX_ZIP_DIRECTORY_BYTES:
        raise Refused(f"its zip directory takes {size} bytes, more than the {MAX_ZIP_DIRECTORY_BYTES} a weights file needs")


_CLASS_HEADER = re.compile(r"class (\w+)\((\w+)\):\s*$")
_DECLARED_LIST = re.compile(r"\s+(__parameters__|__buffers__) = (\[.*\])\s*$")


def _declared_classes(code: str, module: str) -> dict[str, tuple[bool, list[str], list[str]]]:
    """{class name: (is a Module, __parameters__, __buffers__)} of one code/ file, in one pass."""
    classes: dict[str, tuple[bool, list[str], list[str]]] = {}
    current: tuple[str, bool, dict[str, list[str]]] | None = None
    for line in code.splitlines():
        header = _CLASS_HEADER.match(line)
        if header:
            current = (header.group(1), header.group(2) == "Module", {"__parameters__": [], "__buffers__": []})
            classes.setdefault(current[0], (current[1], current[2]["__parameters__"], current[2]["__buffers__"]))
            continue
        if line.strip() and not line.startswith((" ", "\t")):
            current = None
            continue
        match = _DECLARED_LIST.match(line) if current else None
        if match:
            try:
                names = ast.literal_eval(match.group(2))
            except (ValueError, SyntaxError):
                names = None
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise Refused(f"its code declares the {match.group(1)} of {show(module)}.{show(current[0])} unreadably")
            current[2][match.group(1)][:] = names
    return classes


# ---- from records to tensors


def _state_dict_tensors(root) -> dict[str, torch.Tensor]:
    if not isinstance(root, dict):
        raise Refused(f"its top level is {_what(root)}, not a dict of tensors")
    tensors = _Materializer()
    out = {}
    for key, value in root.items():
        key = _name(key, "a top-level entry")
        if not isinstance(value, _TensorRef):
            raise Refused(f"its entry {show(key)} is {_what(value)}, not a tensor")
        out[key] = tensors.tensor(value)
    return out


def _module_tensors(root: _ScriptObject, loader: _ScriptLoader) -> dict[str, _TensorRef]:
    """Every module's parameters and buffers in state_dict() order (a module's own, then each
    submodule's), walked iteratively; a module reached twice (a cycle, or one shared by two
    parents) is refused, so the walk visits each object once."""
    out: dict[str, _TensorRef] = {}
    seen: set[int] = set()
    pending = [(root, "", 0)]
    while pending:
        obj, prefix, depth = pending.pop()
        where = show(prefix.rstrip(".") or "<root>")
        if id(obj) in seen:
            raise Refused(f"module {where} is reached twice: it contains itself or is shared")
        if depth >= MAX_MODULE_DEPTH or len(seen) >= MAX_MODULES:
            raise Refused(f"module {where} nests too deeply, or the archive holds too many modules")
        seen.add(id(obj))
        state = obj.state
        if not isinstance(state, dict):
            raise Refused(f"module {where} has a state that is not a dict of attributes")
        for name in state:
            _name(name, f"an attribute of module {where}")
        _, parameters, buffers = loader.declaration(obj.qualified_name)
        for name in (*parameters, *buffers):
            if name not in state:
                raise Refused(f"module {where} declares {show(name)} but does not hold it")
            value = state[name]
            if value is None:
                continue  # an absent optional parameter (Linear without bias): not in state_dict
            if not isinstance(value, _TensorRef):
                raise Refused(f"{show(prefix + name)} is {_what(value)}, not a tensor")
            out[prefix + name] = value
        children = [
            (value, f"{prefix}{name}.", depth + 1)
            for name, value in state.items()
            if isinstance(value, _ScriptObject) and loader.declaration(value.qualified_name)[0]
        ]
        pending.extend(reversed(children))
    return out


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
            raise Refused("a tensor's storage has no data in the file")
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
