"""Seeds derived from a run's seed: one per purpose (and per index or name within it).

A run has one seed (config `seed`). Everything random that is not a stream of its own generator
(the opponents drawn at a snapshot, the evaluation games after it, a curriculum chunk, a gate
check) gets its seed from `derived_seed(seed, purpose, *keys)`, which is numpy's SeedSequence
with the purpose and keys as its spawn key, as `SeedSequence(seed).spawn(...)` names its
children. Distinct purposes or keys give independent seeds by construction, where sums of
magic primes only hoped not to collide; the same inputs give the same seed in every process.
"""

from __future__ import annotations

import zlib

import numpy as np

SEED_WORD_MAX = 2**32 - 1  # a seed and each key are one 32-bit word of the SeedSequence


def _word(key: int | str) -> int:
    """One spawn-key word: an int as it is, a name by its CRC-32 (stable across processes, unlike hash())."""
    if isinstance(key, str):
        return zlib.crc32(key.encode())
    if not 0 <= key <= SEED_WORD_MAX:
        raise ValueError(f"a seed key must be a name or an integer in [0, {SEED_WORD_MAX}], got {key}")
    return int(key)


def derived_seed(seed: int, purpose: str, *keys: int | str) -> int:
    """A seed in [0, 2**32 - 1] for `purpose` (and `keys` within it) of the run seeded `seed`.

    Example: derived_seed(cfg.seed, "evaluation", snapshot) for the evaluation after a snapshot.
    """
    # One word per key keeps (1, 2) and (4294967297,) apart: an int over 32 bits would be split.
    spawn_key = (_word(purpose), *(_word(k) for k in keys))
    return int(np.random.SeedSequence(_word(seed), spawn_key=spawn_key).generate_state(1, np.uint32)[0])
