"""Derived seeds: deterministic for their inputs, apart for different ones, always 32-bit."""

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from league.config import SEED_MAX
from training.seeds import derived_seed

seeds = st.integers(0, SEED_MAX)
keys = st.lists(st.one_of(st.integers(0, SEED_MAX), st.text(max_size=12)), max_size=3)


@given(seeds, st.text(max_size=12), keys)
def test_same_inputs_same_seed_always_in_range(seed, purpose, more):
    first = derived_seed(seed, purpose, *more)
    assert first == derived_seed(seed, purpose, *more) and 0 <= first <= SEED_MAX


def test_different_seeds_purposes_or_keys_give_different_seeds():
    derived = [derived_seed(seed, purpose, *more) for seed in (0, 1, SEED_MAX)
               for purpose in ("opponents", "evaluation")
               for more in ((), (0,), (1,), (0, 0), (0, 1), (1, 0), ("rule",), ("random",), (2**32 - 1,))]
    assert len(set(derived)) == len(derived)


def test_the_same_in_another_process():
    """Names are hashed with CRC-32, never Python's per-process salted hash()."""
    code = "from training.seeds import derived_seed; print(derived_seed(5, 'gate', 3, 'rule'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parents[1]).stdout
    assert int(out) == derived_seed(5, "gate", 3, "rule")


@pytest.mark.parametrize("bad", [-1, 2**32])  # a wider int would be split into words that alias other keys
def test_an_integer_key_out_of_range_is_refused(bad):
    with pytest.raises(ValueError, match="seed key"):
        derived_seed(0, "chunk", bad)
