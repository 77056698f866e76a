"""A done prefix's id markers are merged without numpy for small runs (issue 39).

The merge ran ``numpy.sort`` at the end of every run, and importing numpy was a tenth of a
second of CPU for a run of a few thousand items. Below ``_NUMPY_FROM`` markers the merge is
Python's sort; the bytes are the same as numpy's (checked against numpy, the reference).
"""

import random
import sys
from array import array

import numpy as np

from convoscope.items import _prefix
from convoscope.items._prefix import Prefix, _merged


def _parts(rng, sizes):
    return [array("Q", (rng.getrandbits(64) for _ in range(size))) for size in sizes]


def _numpy_merge(old, parts):
    arrays = [np.frombuffer(part, dtype=np.uint64) for part in parts]
    if old is not None:
        arrays.insert(0, np.frombuffer(old.markers, dtype="<u8"))
    return np.sort(np.concatenate(arrays)).astype("<u8").tobytes()


def test_a_small_prefix_is_merged_without_importing_numpy(monkeypatch):
    rng = random.Random(39)
    parts = _parts(rng, [256, 256, 100])
    expected = _numpy_merge(None, parts)
    monkeypatch.setitem(sys.modules, "numpy", None)  # any `import numpy` now fails
    assert _merged(None, parts) == expected


def test_a_prefix_grown_by_new_chunks_keeps_every_marker_sorted(monkeypatch):
    rng = random.Random(7)
    old = Prefix(2, 256, 512, 1000, "d", _numpy_merge(None, _parts(rng, [256, 256])))
    parts = _parts(rng, [256, 3])
    expected = _numpy_merge(old, parts)
    monkeypatch.setitem(sys.modules, "numpy", None)
    assert _merged(old, parts) == expected


def test_a_large_prefix_is_merged_by_numpy_to_the_same_bytes(monkeypatch):
    rng = random.Random(1)
    parts = _parts(rng, [300, 300])
    monkeypatch.setattr(_prefix, "_NUMPY_FROM", 500)
    assert _merged(None, parts) == _numpy_merge(None, parts)
