"""py3langid's model, unpacked once per machine.

py3langid ships its model as an npz archive inside LZMA and unpacks it on every start: about
0.4 s of CPU, most of what ``convoscope gibberish --lang auto`` spends on the first answer that
needs identifying. The unpacked archive is kept under ``$XDG_CACHE_HOME/convoscope`` (as the
embedded model's joined weights are), named by py3langid's version and the packed file's size and
time, and read with the steps py3langid itself takes after unpacking, so the identifier (and every
decision it feeds) is the same. When the folder cannot be written, or the kept file cannot be
read, py3langid's own loader is used.
"""

from __future__ import annotations

import contextlib
import functools
import lzma
import mmap
import shutil
import struct
import zipfile
from array import array
from pathlib import Path
from typing import IO, Any

from convoscope._folders import keep_file, kept_name


def unpacked_path(packed: Path) -> Path:
    """Where the unpacked model of this py3langid (version, size and time of its file) is kept."""
    return kept_name("py3langid", packed, suffix=".npz")


def packed_path() -> Path:
    from py3langid.langid import MODEL_DIR, MODEL_FILE

    return Path(MODEL_DIR) / MODEL_FILE


def load_identifier() -> object:
    """py3langid's identifier with normalised probabilities, from the unpacked model when kept."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    packed = packed_path()
    unpacked = unpacked_path(packed)
    if not unpacked.exists():
        _unpack(packed, unpacked)
    model = _read_unpacked(unpacked) if unpacked.exists() else None
    kept_scores = _kept_scores_class(LanguageIdentifier)
    if model is None:
        return kept_scores.from_model_file(MODEL_FILE, norm_probs=True)
    import numpy as np

    ptc, pc, classes, nextmove, row, output = model
    # As LanguageIdentifier.from_model_file builds it from the same six parts.
    return kept_scores(np.asarray(ptc), np.asarray(pc), classes, nextmove, output,
                       norm_probs=True, tk_row=row)


# Texts whose scores are kept (a score vector is 97 float32).
_SCORES_KEPT = 4096


def _kept_scores_class(base: Any) -> Any:
    """py3langid's identifier that scores a text once: ``classify`` (the filter's ``identify``)
    and ``rank`` (``identify_ranked``) both start from ``_decide(text)``, the scores of every
    language, and a short flagged answer asks both; a sentence the fast path leaves recurs
    across answers. The scores depend on the text alone and neither method changes them, so the
    last texts' scores are kept (a subclass: py3langid's class has slots, so no instance can
    carry a cache of its own)."""

    class KeptScores(base):
        @functools.lru_cache(maxsize=_SCORES_KEPT)  # noqa: B019 (one identifier per process)
        def _decide(self, text: str | bytes) -> Any:
            return super()._decide(text)

    return KeptScores


def _unpack(packed: Path, unpacked: Path) -> None:
    """Best effort, whole or absent (keep_file): a folder that cannot be written, or a damaged
    archive, leaves py3langid to unpack in memory (its own loader then reports a bad model)."""

    def write(part: IO[bytes]) -> None:
        with lzma.open(packed) as source:
            shutil.copyfileobj(source, part, length=1 << 20)  # 68 MB, streamed

    keep_file(unpacked, write, failures=(EOFError, lzma.LZMAError))


def _read_unpacked(path: Path) -> tuple[object, ...] | None:
    """The six parts py3langid's ``modelio.load_model`` returns, with the same values; None (and
    the file removed) when the file is damaged or of another layout. The two large tables are
    not read through the archive: the class-feature table (28 MB, of which one answer needs a few
    rows) and the tokeniser's transitions (39 MB, of which a text walks a few hundred states) are
    mapped from the file."""
    import numpy as np
    from py3langid.modelio import _to_array

    try:
        nextmove, ptc = _transitions(path), _mapped(path, "ptc")
        with np.load(path, allow_pickle=False) as data:
            return (ptc, data["pc"], data["classes"].tolist(), nextmove,
                    _to_array(data["nextmove_row"]), data["out_feat"].tolist())
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, struct.error):
        with contextlib.suppress(OSError):  # a system that cannot remove a mapped file keeps it
            path.unlink(missing_ok=True)
        return None


def _member(path: Path, name: str) -> tuple[int, tuple[int, ...], bool, Any]:
    """(offset of the data, shape, Fortran order, dtype) of ``name``.npy stored uncompressed in
    the archive (as ``numpy.savez`` stores it)."""
    from numpy.lib import format as npy

    with zipfile.ZipFile(path) as archive, open(path, "rb") as raw:
        info = archive.getinfo(f"{name}.npy")
        if info.compress_type != zipfile.ZIP_STORED:
            raise ValueError(f"{name}: compressed")
        raw.seek(info.header_offset)
        local = raw.read(30)
        if local[:4] != b"PK\x03\x04":
            raise ValueError(f"{name}: no local header")
        name_length, extra_length = struct.unpack("<HH", local[26:30])
        raw.seek(info.header_offset + 30 + name_length + extra_length)
        major, _ = npy.read_magic(raw)
        read_header = npy.read_array_header_1_0 if major == 1 else npy.read_array_header_2_0
        shape, fortran, dtype = read_header(raw)
        return raw.tell(), shape, fortran, dtype


def _mapped(path: Path, name: str) -> object:
    import numpy as np

    offset, shape, fortran, dtype = _member(path, name)
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape, order="F" if fortran else "C")


def _transitions(path: Path) -> memoryview:
    """``_to_array(data["nextmove"])``'s items, with its typecode as the view's format, mapped
    from the file: py3langid only indexes the table, and a text walks a few hundred of its ten
    million states, so reading all 39 MB (0.06 s) is wasted."""
    offset, shape, _, dtype = _member(path, "nextmove")
    if len(shape) != 1 or dtype.kind != "u" or not dtype.isnative or dtype.itemsize not in _TYPECODES:
        raise ValueError("nextmove: not a native unsigned vector")
    typecode = _TYPECODES[dtype.itemsize]
    if array(typecode).itemsize != dtype.itemsize or offset % dtype.itemsize:
        raise ValueError("nextmove: item size or alignment")
    with open(path, "rb") as raw:  # the map outlives the descriptor
        mapped = mmap.mmap(raw.fileno(), 0, access=mmap.ACCESS_READ)
    end = offset + shape[0] * dtype.itemsize
    if end > len(mapped):
        raise EOFError("nextmove: the file is cut short")
    return memoryview(mapped)[offset:end].cast(typecode)  # type: ignore[call-overload]


# py3langid's ``modelio._TYPECODE``: the array typecode of an unsigned item size.
_TYPECODES = {2: "H", 4: "I", 8: "L"}
