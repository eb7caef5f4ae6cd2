"""Small hostile bot files that ask the reader for far more than they hold (issue 47, items 1-6),
and the Element-style pickles they are made of. Each builder writes one bot folder and returns
(kind, folder, what it is)."""

from __future__ import annotations

import pickle
import sys
import types
import zipfile
from collections import OrderedDict
from pathlib import Path

import torch

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
MiB = 2**20


def _folder(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    return folder


def legacy_storage(numel: int, count: int | None = None, data: bytes | None = None, magic: int = LEGACY_MAGIC) -> bytes:
    """The legacy torch.save stream of one float storage of `numel` elements, as Element's model.p
    embeds each storage: `count` and `data` (zeros by default) follow the storage's pickle."""
    out = bytearray()
    for value in (magic, 1001, {"protocol_version": 1001, "little_endian": True, "type_sizes": {}}):
        out += pickle.dumps(value, protocol=2)
    out += (b"\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x00kX\x03\x00\x00\x00cpu"
            + b"\x8a\x08" + numel.to_bytes(8, "little", signed=True) + b"NtQ.")
    out += pickle.dumps(["k"], protocol=2)
    count = numel if count is None else count
    out += count.to_bytes(8, "little", signed=True) + (bytes(4 * numel) if data is None else data)
    return bytes(out)


class Blob:
    """Pickles as torch.storage._load_from_bytes(blob), as a tensor's storage does."""

    def __init__(self, blob: bytes):
        self.blob = blob

    def __reduce__(self):
        return (torch.storage._load_from_bytes, (self.blob,))


class TensorOf:
    """Pickles as torch._utils._rebuild_tensor_v2 over a storage of `numel` floats, as a tensor does."""

    def __init__(self, storage, numel: int):
        self.storage, self.numel = storage, numel

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2, (self.storage, 0, (self.numel,), (1,), False, OrderedDict()))


def element_style(blob: bytes, numel: int) -> bytes:
    """A model.p as Element ships it: {"w": a tensor whose storage is the legacy stream `blob`}."""
    return pickle.dumps(OrderedDict(w=TensorOf(Blob(blob), numel)), protocol=3)


def memo_amplification(root: Path, entries: int = 700) -> tuple[str, Path, str]:
    """Item 1: one 1 MiB storage blob, memoised, loaded `entries` times by distinct REDUCEs."""
    numel = MiB // 4
    blob = legacy_storage(numel)
    state = OrderedDict((f"w{i}", TensorOf(Blob(blob), numel)) for i in range(entries))
    folder = _folder(root, "memo")
    (folder / "model.p").write_bytes(pickle.dumps(state, protocol=3))
    return "element", folder, f"a model.p whose one 1 MiB storage blob is loaded {entries} times"


def _storage_pickle(keys: list[str], numel: int) -> bytes:
    """A data.pkl that is a list of storages, one persistent id per key."""

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            return obj if isinstance(obj, tuple) and obj[:1] == ("storage",) else None

    out = __import__("io").BytesIO()
    Pickler(out, protocol=2).dump([("storage", torch.FloatStorage, key, "cpu", numel) for key in keys])
    return out.getvalue()


def zip_expansion(root: Path, members: int = 6, member_mib: int = 64, method: int = zipfile.ZIP_DEFLATED):
    """Item 2: a necto-model.pt whose storage records each inflate from a few KB to `member_mib` MiB."""
    folder = _folder(root, f"zip-{method}")
    keys = [str(i) for i in range(members)]
    zeros = bytes(member_mib * MiB)
    with zipfile.ZipFile(folder / "necto-model.pt", "w", compression=method, compresslevel=9) as z:
        z.writestr("archive/data.pkl", _storage_pickle(keys, member_mib * MiB // 4))
        for key in keys:
            z.writestr(f"archive/data/{key}", zeros)
    name = {zipfile.ZIP_DEFLATED: "deflate", zipfile.ZIP_BZIP2: "bzip2"}[method]
    return "necto", folder, f"a necto-model.pt of {members} {name} records of {member_mib} MiB of zeros"


def opcode_flood(root: Path, pairs: int = 2_000_000) -> tuple[str, Path, str]:
    """Item 3: a model.p that is `pairs` times NONE, POP (4 MB), then an empty dict."""
    folder = _folder(root, "opcodes")
    (folder / "model.p").write_bytes(b"\x80\x02" + b"N0" * pairs + b"}.")
    return "element", folder, f"a model.p of {2 * pairs} opcodes (NONE, POP)"


def deep_tuple_key(root: Path, depth: int = 200_000) -> tuple[str, Path, str]:
    """Item 4: a dict whose key is a tuple nested `depth` deep (hashing it overflows the C stack)."""
    folder = _folder(root, "deep")
    (folder / "model.p").write_bytes(b"\x80\x02}" + b")" + b"\x85" * depth + b"K\x01s.")
    return "element", folder, f"a model.p whose dict key is a tuple nested {depth} deep"


def _script_archive(folder: Path, root_object, code: dict[str, bytes], stored: bool = False) -> None:
    method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(folder / "necto-model.pt", "w", compression=method) as z:
        z.writestr("archive/data.pkl", pickle.dumps(root_object, protocol=2))
        for path, text in code.items():
            z.writestr(f"archive/code/{path}", text)


def _script_classes(module: str, names: list[str]) -> list[type]:
    """Classes pickle names as `module.<name>` (a module registered for pickling only)."""
    parts = module.split(".")
    for i in range(1, len(parts) + 1):  # pickle imports the module, so its packages must exist too
        sys.modules.setdefault(".".join(parts[:i]), types.ModuleType(".".join(parts[:i])))
    mod = sys.modules[module]
    classes = []
    for name in names:
        cls = type(name, (), {"__module__": module})
        cls.__qualname__ = name
        setattr(mod, name, cls)
        classes.append(cls)
    return classes


def _module_declarations(names: list[str]) -> bytes:
    return "".join(f"class {n}(Module):\n  __parameters__ = []\n  __buffers__ = []\n" for n in names).encode()


def exponential_walk(root: Path, levels: int = 40) -> tuple[str, Path, str]:
    """Item 5: `levels` modules, each with two attributes holding the next level's one object."""
    names = [f"L{i}" for i in range(levels + 1)]
    classes = _script_classes("__torch__.bomb", names)
    below = classes[-1]()
    below.x = 1  # a leaf with a state, so a walk reaches every leaf without an error
    for cls in reversed(classes[:-1]):
        obj = cls()
        obj.a = obj.b = below
        below = obj
    folder = _folder(root, "walk")
    _script_archive(folder, below, {"__torch__/bomb.py": _module_declarations(names)})
    return "necto", folder, f"a necto-model.pt of {levels} module levels, each holding the next twice"


def code_rescan(root: Path, attributes: int = 2000, code_mib: int = 4) -> tuple[str, Path, str]:
    """Item 6: a module with `attributes` submodules of one class declared in a `code_mib` MiB code
    file (stored, so the file is as large as its code and no expansion limit stops it)."""
    (parent, child) = _script_classes("__torch__.rescan", ["Parent", "Child"])
    obj = parent()
    for i in range(attributes):
        setattr(obj, f"m{i}", child())
        getattr(obj, f"m{i}").x = i  # a state, so each is a well-formed module
    padding = b"# padding\n" * (code_mib * MiB // 10)
    folder = _folder(root, "rescan")
    _script_archive(folder, obj, {"__torch__/rescan.py": padding + _module_declarations(["Parent", "Child"])},
                    stored=True)
    return "necto", folder, f"a necto-model.pt whose {attributes} submodules' class is declared in {code_mib} MiB of code"
