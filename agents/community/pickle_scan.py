"""What one community weights file may cost the reader, and the pass over each pickle that checks it
before anything is unpickled.

A weights file is small (Element's model.p 1.2 MB, Necto's archive 0.7 MB), but a pickle and a zip
can ask for far more than they hold: a memo reference re-used a million times, a zip member that
inflates 1000-fold, a tuple nested 200,000 deep whose hash overflows the C stack. So every read is
charged to one `FileBudget` made from the file's size, and every pickle is walked once, streaming,
before the unpickler sees it: the walk refuses opcodes torch never writes, memo slots beyond
reason, and values nested deeper than any weights file nests them (a small abstract stack of
nesting depths stands in for the unpickler's stack, so the check costs no more than the opcodes).
"""

from __future__ import annotations

import io
import pickletools

MAX_EXPANSION_BYTES = 256 * 2**20  # bytes one file may make: storages, zip members, code text
EXPANSION_PER_FILE_BYTE = 16  # ... and at most this many per byte of the file, plus the slack
EXPANSION_SLACK_BYTES = 2**20
MAX_OPCODES = 200_000  # over every pickle of one file (Element's model.p has 1,256, Necto's 851)
MAX_NESTING = 128  # containers within containers (both bots' files nest under 10)
MAX_MEMO_INDEX = 1 << 16  # a pickle's memo slots; the C unpickler allocates up to the largest index

# Opcodes torch never writes and that reach beyond plain values (extension registry, out-of-band
# buffers, protocol-0 class instantiation, stack copies): refused before the unpickler sees them.
_REFUSED_OPCODES = {"EXT1", "EXT2", "EXT4", "NEXT_BUFFER", "READONLY_BUFFER", "INST", "OBJ", "DUP"}
_PUTS = {"PUT", "BINPUT", "LONG_BINPUT"}
_GETS = {"GET", "BINGET", "LONG_BINGET"}
# Opcodes that add to the container below their arguments and leave it on the stack.
_MUTATORS = {"APPEND", "APPENDS", "SETITEM", "SETITEMS", "ADDITEMS", "BUILD"}
_MARK = object()


class Refused(Exception):
    """Why a file is refused (a clause); the reader turns it into one sentence naming the file."""


class FileBudget:
    """The bytes and opcodes one file may make the reader produce, spent as it reads."""

    def __init__(self, file_bytes: int):
        self.bytes_limit = min(MAX_EXPANSION_BYTES, EXPANSION_PER_FILE_BYTE * file_bytes + EXPANSION_SLACK_BYTES)
        self.bytes_left = self.bytes_limit
        self.opcodes_left = MAX_OPCODES

    def spend_bytes(self, count: int, what: str) -> None:
        """Charge `count` bytes made for `what`; refuse once the file's total would pass its limit."""
        if count > self.bytes_left:
            raise Refused(
                f"{what} would take what it expands to past {self.bytes_limit} bytes "
                f"(at most {EXPANSION_PER_FILE_BYTE} times the file's size, plus {EXPANSION_SLACK_BYTES})"
            )
        self.bytes_left -= count

    def prescan(self, buf: io.BytesIO) -> None:
        """Walk one pickle's opcodes from `buf`'s position, building nothing, and rewind: refuse what
        torch never writes, memo slots beyond MAX_MEMO_INDEX, nesting beyond MAX_NESTING, and opcodes
        beyond the file's MAX_OPCODES."""
        start = buf.tell()
        walk = _DepthWalk()
        try:
            for op, arg, _pos in pickletools.genops(buf):
                self.opcodes_left -= 1
                if self.opcodes_left < 0:
                    raise Refused(f"its pickles hold more than {MAX_OPCODES} opcodes, far more than any weights file")
                walk.step(op, arg)
        except ValueError as e:
            raise Refused(f"its pickle is malformed ({str(e)[:80]})") from None
        buf.seek(start)


class _Depth:
    """One value on the abstract stack: how deeply it nests (shared by the memo and the stack, as
    the unpickler shares the value, so a container filled after it was memoised is seen filled)."""

    __slots__ = ("depth",)

    def __init__(self, depth: int):
        self.depth = _bounded(depth)


def _bounded(depth: int) -> int:
    if depth > MAX_NESTING:
        raise Refused(f"its pickle nests values more than {MAX_NESTING} deep, which no weights file does")
    return depth


class _DepthWalk:
    """The unpickler's stack and memo with each value replaced by its nesting depth."""

    def __init__(self):
        self.stack: list = []
        self.memo: dict[int, _Depth] = {}

    def step(self, op: pickletools.OpcodeInfo, arg) -> None:
        name = op.name
        if name in _REFUSED_OPCODES:
            raise Refused(f"its pickle uses the {name} opcode, which weights files never need")
        if name in _PUTS or name == "MEMOIZE":
            index = len(self.memo) if name == "MEMOIZE" else int(arg)
            if index > MAX_MEMO_INDEX:
                raise Refused("its pickle uses an implausibly large memo index")
            self.memo[index] = self._top()
        elif name in _GETS:
            found = self.memo.get(int(arg))
            if found is None:
                raise Refused("its pickle reads a memo slot it never wrote")
            self.stack.append(found)
        elif name == "MARK":
            self.stack.append(_MARK)
        else:
            self._apply(name, op.stack_before, op.stack_after)

    def _apply(self, name: str, before: list, after: list) -> None:
        popped = self._pop(before)
        if name in _MUTATORS:
            container, items = popped[0], popped[1:]
            container.depth = _bounded(max([container.depth] + [v.depth + 1 for v in items]))
            self.stack.append(container)
            return
        depth = 1 + max((v.depth for v in popped), default=-1)
        self.stack.extend(_Depth(depth) for _ in after)

    def _pop(self, before: list) -> list[_Depth]:
        """Pop what an opcode consumes (down to a mark, then the fixed items below it)."""
        above: list[_Depth] = []
        below = len(before)
        if pickletools.markobject in before:
            below = before.index(pickletools.markobject)
            while True:
                if not self.stack:
                    raise Refused("its pickle closes a mark it never opened")
                value = self.stack.pop()
                if value is _MARK:
                    break
                above.append(value)
            above.reverse()
        fixed = [self._pop_value() for _ in range(below)]
        fixed.reverse()
        return fixed + above

    def _pop_value(self) -> _Depth:
        if not self.stack or self.stack[-1] is _MARK:
            raise Refused("its pickle takes a value from an empty stack")
        return self.stack.pop()

    def _top(self) -> _Depth:
        if not self.stack or self.stack[-1] is _MARK:
            raise Refused("its pickle memoises a value from an empty stack")
        return self.stack[-1]
