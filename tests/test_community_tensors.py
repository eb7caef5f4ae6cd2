"""agents.community.tensors: community weights read as tensors only, equal to what torch loads,
and every hostile or broken file refused in one sentence without running anything from it."""

from __future__ import annotations

import os
import pickle
import zipfile

import pytest
import torch

import community_bombs as bombs
from agents.community import tensors as tensors_module
from agents.community.tensors import (
    CommunityFileError,
    read_state_dict,
    read_torchscript_tensors,
)
from community_bots import bots_dir
from league.errors import LeagueError

# torch.jit.load/script/save make and read the TorchScript references here (torch marks them
# deprecated); pickletools warns about the bad escapes some flipped bytes put in protocol-0 strings.
pytestmark = [
    pytest.mark.filterwarnings("ignore:`torch.jit.*:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:invalid escape sequence:DeprecationWarning"),
]


def assert_same_tensors(ours: dict, ref: dict) -> None:
    assert list(ours) == list(ref)
    for key, value in ref.items():
        assert ours[key].dtype == value.dtype, key
        assert ours[key].shape == value.shape, key
        assert torch.equal(ours[key], value), key


def assert_refused(read, path) -> CommunityFileError:
    with pytest.raises(CommunityFileError) as info:
        read(path)
    message = str(info.value)
    assert str(path) in message and message.endswith(".") and "\n" not in message, message
    assert isinstance(info.value, LeagueError)
    return info.value


# ---- the real files


def test_element_model_is_read_as_pickle_would_load_it():
    path = bots_dir() / "Element" / "model.p"
    ours = read_state_dict(path)
    with open(path, "rb") as f:
        ref = pickle.load(f)  # the bot's own way (tests only)
    assert_same_tensors(ours, ref)
    assert ours["fc1.weight"].shape == (256, 107)


def test_necto_model_is_read_as_torch_jit_load_would_key_it():
    path = bots_dir() / "Necto" / "Necto" / "necto-model.pt"
    ours = read_torchscript_tensors(path)
    ref = torch.jit.load(str(path)).state_dict()  # tests only
    assert_same_tensors(ours, ref)
    assert len(ours) == 18


# ---- formats, round trip


def sample_state() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    base = torch.randn(6, 4, generator=g)
    return {
        "f32": torch.randn(3, 5, generator=g),
        "f64": torch.randn(4, generator=g, dtype=torch.float64),
        "f16": torch.randn(2, 2, generator=g).half(),
        "bf16": torch.randn(3, generator=g).bfloat16(),
        "i64": torch.arange(7),
        "i32": torch.arange(5, dtype=torch.int32),
        "u8": torch.arange(4, dtype=torch.uint8),
        "bool": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3),
        "transposed": base.t(),  # non-contiguous
        "row_view": base[2:4],  # shares base's storage at an offset
        "base": base,
    }


@pytest.mark.parametrize("zip_format", [True, False], ids=["zip", "legacy"])
def test_torch_save_formats_no_adapter_reads_are_refused(tmp_path, zip_format):
    """torch.save's archive and its top-level legacy stream are not what Element ships: refused."""
    path = tmp_path / "weights.pt"
    torch.save(sample_state(), path, _use_new_zipfile_serialization=zip_format)
    says = "zip archive" if zip_format else "legacy torch.save stream"
    assert says in str(assert_refused(read_state_dict, path))


def test_state_dict_pickled_directly_round_trips(tmp_path):
    path = tmp_path / "model.p"
    with open(path, "wb") as f:
        pickle.dump(sample_state(), f)  # Element's way of saving
    assert_same_tensors(read_state_dict(path), sample_state())


class _ScriptedNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2, bias=False))
        self.norm = torch.nn.BatchNorm1d(2)  # buffers: running_mean, running_var, num_batches_tracked
        self.register_buffer("scale", torch.tensor([2.0, 3.0]))
        self.plain = torch.ones(2)  # a tensor attribute that is neither parameter nor buffer

    def forward(self, x):
        return self.norm(self.body(x)) * self.scale + self.plain


def test_torchscript_archive_keys_match_state_dict(tmp_path):
    path = tmp_path / "net.pt"
    torch.jit.save(torch.jit.script(_ScriptedNet().eval()), str(path))
    ours = read_torchscript_tensors(path)
    assert_same_tensors(ours, torch.jit.load(str(path)).state_dict())
    assert "plain" not in ours and "body.2.bias" not in ours and "norm.num_batches_tracked" in ours


# ---- hostile files: nothing from them ever runs


class _Payload:
    def __init__(self, command: str):
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


class _ExecPayload:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').close()",))


def hostile_files(folder, marker) -> dict:
    """Each format carrying a payload that would create `marker` if anything unpickled it."""
    tensor = torch.arange(4.0)
    files = {}
    system, execute = _Payload(f"touch {marker}"), _ExecPayload(marker)
    for name, payload in (("system", system), ("exec", execute)):
        plain = folder / f"{name}.p"
        plain.write_bytes(pickle.dumps({"w": tensor, "x": payload}))
        zipped = folder / f"{name}.zip.pt"
        torch.save({"w": tensor, "x": payload}, zipped)
        legacy = folder / f"{name}.legacy.pt"
        torch.save({"w": tensor, "x": payload}, legacy, _use_new_zipfile_serialization=False)
        files[name] = (plain, zipped, legacy)
    return files


def test_payloads_run_under_pickle_load(tmp_path):
    """The control: these files really do run their payloads when unpickled the usual way."""
    marker = tmp_path / "MARKER"
    files = hostile_files(tmp_path, marker)
    for name in ("system", "exec"):
        with open(files[name][0], "rb") as f:
            pickle.load(f)
        assert marker.exists()
        marker.unlink()


def test_payloads_are_refused_and_never_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "MARKER"
    for plain, zipped, legacy in hostile_files(tmp_path, marker).values():
        assert "which the league never loads" in str(assert_refused(read_state_dict, plain))
        assert_refused(read_state_dict, zipped)  # formats no adapter reads: refused before unpickling
        assert_refused(read_state_dict, legacy)
    assert not marker.exists()


def test_torchscript_payload_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "MARKER"
    good = tmp_path / "net.pt"
    torch.jit.save(torch.jit.script(_ScriptedNet().eval()), str(good))
    for name, payload in (("system", _Payload(f"touch {marker}")), ("exec", _ExecPayload(marker))):
        hostile = tmp_path / f"{name}.pt"
        with zipfile.ZipFile(good) as src, zipfile.ZipFile(hostile, "w") as dst:
            for info in src.infolist():
                data = src.read(info)
                if info.filename.endswith("/data.pkl"):
                    data = pickle.dumps(payload, protocol=2)
                dst.writestr(info, data)
        assert_refused(read_torchscript_tensors, hostile)
        # a payload following a genuine module pickle (the module popped, then the payload) too
        with zipfile.ZipFile(good) as src, zipfile.ZipFile(hostile, "w") as dst:
            for info in src.infolist():
                data = src.read(info)
                if info.filename.endswith("/data.pkl"):
                    data = data[:-1] + b"0" + pickle.dumps(payload, protocol=2)[2:]
                dst.writestr(info, data)
        assert_refused(read_torchscript_tensors, hostile)
    assert not marker.exists()


# ---- broken files


@pytest.fixture
def saved(tmp_path):
    """One small network in each format the adapters read: {"script": a TorchScript archive,
    "plain": a state dict pickled as Element's model.p is}."""
    paths = {"script": tmp_path / "net.pt", "plain": tmp_path / "p.p"}
    torch.jit.save(torch.jit.script(_ScriptedNet().eval()), str(paths["script"]))
    paths["plain"].write_bytes(pickle.dumps({"a": torch.randn(16, 8), "b": torch.arange(10)}))
    return paths


READERS = {"script": read_torchscript_tensors, "plain": read_state_dict}


@pytest.mark.parametrize("kind", ["script", "plain"])
def test_truncated_copies_are_refused(saved, kind, tmp_path):
    data = saved[kind].read_bytes()
    cut = tmp_path / "cut.pt"
    for length in sorted({1, 2, 10, 40, len(data) // 3, len(data) // 2, len(data) - 200, len(data) - 1}):
        cut.write_bytes(data[:length])
        assert_refused(READERS[kind], cut)


@pytest.mark.parametrize("kind", ["script", "plain"])
def test_flipped_bytes_never_escape_as_other_errors(saved, kind, tmp_path):
    """Any one flipped byte: a CommunityFileError, or (where a plain file has no checksum: raw tensor
    bytes, a letter of a key; or a zip's unchecked directory fields) still a dict of named tensors."""
    data = saved[kind].read_bytes()
    flipped = tmp_path / "flipped.pt"
    refused = 0
    for position in range(0, len(data), max(1, len(data) // 300)):
        copy = bytearray(data)
        copy[position] ^= 0x5A
        flipped.write_bytes(bytes(copy))
        try:
            result = READERS[kind](flipped)
        except CommunityFileError:
            refused += 1
            continue
        assert all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in result.items()), position
    assert refused > 0


def test_flipped_tensor_byte_in_an_archive_fails_its_crc(saved, tmp_path):
    data = bytearray(saved["script"].read_bytes())
    offset = data.index(torch.tensor([2.0, 3.0]).numpy().tobytes())  # the buffer "scale", stored uncompressed
    data[offset + 3] ^= 1
    flipped = tmp_path / "crc.pt"
    flipped.write_bytes(bytes(data))
    assert "damaged" in str(assert_refused(read_torchscript_tensors, flipped))


def test_empty_missing_and_directory_are_refused(tmp_path):
    empty = tmp_path / "empty.pt"
    empty.write_bytes(b"")
    assert "empty" in str(assert_refused(read_state_dict, empty))
    assert "does not exist" in str(assert_refused(read_state_dict, tmp_path / "nope.pt"))
    assert "not a file" in str(assert_refused(read_state_dict, tmp_path))
    assert "not a file" in str(assert_refused(read_torchscript_tensors, tmp_path))
    fifo = tmp_path / "model.p"
    os.mkfifo(fifo)  # refused at once by the league's file rule, never waited on
    assert "named pipe (FIFO), not a file" in str(assert_refused(read_state_dict, fifo))


def test_oversized_file_is_refused_before_reading(saved, monkeypatch):
    monkeypatch.setattr(tensors_module, "MAX_FILE_BYTES", 100)
    assert "more than a community weights file can be" in str(assert_refused(read_state_dict, saved["plain"]))


@pytest.mark.parametrize("top", [[torch.ones(2)], 3, "text", {"a": 1}, {1: torch.ones(2)}, {"a": [torch.ones(2)]}])
def test_non_dict_top_level_and_non_tensor_values_are_refused(tmp_path, top):
    path = tmp_path / "top.p"
    path.write_bytes(pickle.dumps(top))
    assert_refused(read_state_dict, path)


def test_hand_made_element_style_file_reads(tmp_path):
    path = tmp_path / "hand.p"
    path.write_bytes(bombs.element_style(bombs.legacy_storage(3, 3, torch.tensor([1.0, 2.0, 3.0]).numpy().tobytes()), 3))
    assert torch.equal(read_state_dict(path)["w"], torch.tensor([1.0, 2.0, 3.0]))
    with open(path, "rb") as f:
        assert torch.equal(pickle.load(f)["w"], torch.tensor([1.0, 2.0, 3.0]))  # the control (tests only)


@pytest.mark.parametrize(
    "numel, count, data, magic, says",
    [
        (10**12, 10**12, b"\0" * 12, tensors_module.LEGACY_MAGIC, "more bytes than the file holds"),
        (3, 4, b"\0" * 16, tensors_module.LEGACY_MAGIC, "holds 4 elements where 3 were declared"),
        (3, 3, b"\0" * 8, tensors_module.LEGACY_MAGIC, "ends inside the data"),
        (3, 3, b"\0" * 16, tensors_module.LEGACY_MAGIC, "unexpected bytes"),
        (3, 3, b"\0" * 12, 12345, "magic number"),
    ],
    ids=["huge-count", "count-mismatch", "short-data", "trailing-bytes", "wrong-magic"],
)
def test_inconsistent_embedded_storages_are_refused(tmp_path, numel, count, data, magic, says):
    path = tmp_path / "bad.p"
    path.write_bytes(bombs.element_style(bombs.legacy_storage(numel, count, data, magic), 1))
    assert says in str(assert_refused(read_state_dict, path))


def test_archive_record_of_the_wrong_size_is_refused(saved, tmp_path):
    bad = tmp_path / "short-record.pt"
    with zipfile.ZipFile(saved["script"]) as src, zipfile.ZipFile(bad, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            dst.writestr(info, data[:-4] if info.filename.endswith("/data/0") else data)
    assert "bytes where" in str(assert_refused(read_torchscript_tensors, bad))


def test_huge_memo_index_is_refused_before_unpickling(tmp_path):
    path = tmp_path / "memo.p"
    path.write_bytes(b"\x80\x02}r\xff\xff\xff\x7f.")  # EMPTY_DICT, LONG_BINPUT 2**31-1, STOP
    assert "memo index" in str(assert_refused(read_state_dict, path))


def test_torchscript_reader_refuses_other_formats(saved, tmp_path):
    assert_refused(read_torchscript_tensors, saved["plain"])
    zipped = tmp_path / "state.pt"
    torch.save({"a": torch.ones(2)}, zipped)  # a zip, but a state dict rather than a module
    assert_refused(read_torchscript_tensors, zipped)


def test_quoted_names_are_cut_short(tmp_path):
    """A name of megabytes (a key, a global) is quoted in at most a few dozen characters."""
    path = tmp_path / "model.p"
    path.write_bytes(pickle.dumps({"k" * 5_000_000: torch.ones(1)}))
    assert len(str(assert_refused(read_state_dict, path))) < 400
    path.write_bytes(b"\x80\x02c" + b"m" * 3_000_000 + b"\nname\n.")
    message = str(assert_refused(read_state_dict, path))
    assert "never loads" in message and len(message) < 400


def test_nesting_is_counted_through_the_memo(tmp_path):
    """A list memoised, then wrapped again and again through memo reads, nests as deep as it looks."""
    path = tmp_path / "model.p"
    wrap = b"]h\x00a" + b"q\x00"  # EMPTY_LIST, BINGET 0, APPEND, BINPUT 0: a list holding the last one
    path.write_bytes(b"\x80\x02]q\x00" + wrap * 1000 + b"0}.")
    assert "nests values more than" in str(assert_refused(read_state_dict, path))
    path.write_bytes(b"\x80\x02h\x05.")  # a memo slot read before it is written
    assert "memo slot it never wrote" in str(assert_refused(read_state_dict, path))
