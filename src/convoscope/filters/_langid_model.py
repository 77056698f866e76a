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

import lzma
import os
import shutil
import tempfile
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def cache_folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "convoscope"


def unpacked_path(packed: Path) -> Path:
    """Where the unpacked model of this py3langid (version, size and time of its file) is kept."""
    try:
        release = version("py3langid")
    except PackageNotFoundError:
        release = "unknown"
    stat = packed.stat()
    return cache_folder() / f"py3langid-{release}-{stat.st_size}-{stat.st_mtime_ns}.npz"


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
    if model is None:
        return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    import numpy as np

    ptc, pc, classes, nextmove, row, output = model
    # As LanguageIdentifier.from_model_file builds it from the same six parts.
    return LanguageIdentifier(np.asarray(ptc), np.asarray(pc), classes, nextmove, output,
                              norm_probs=True, tk_row=row)


def _unpack(packed: Path, unpacked: Path) -> None:
    """Best effort: a folder that cannot be written leaves py3langid to unpack in memory."""
    try:
        unpacked.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=unpacked.parent, suffix=".part", delete=False) as part:
            with lzma.open(packed) as source:
                shutil.copyfileobj(source, part, length=1 << 20)
        os.replace(part.name, unpacked)  # whole or absent: a reader never sees half a file
    except (OSError, EOFError, lzma.LZMAError):  # py3langid's own loader then reports a bad model
        try:
            os.unlink(part.name)
        except (NameError, OSError):
            pass


def _read_unpacked(path: Path) -> tuple[object, ...] | None:
    """The six parts py3langid's ``modelio.load_model`` returns, read as it reads them after
    unpacking; None (and the file removed) when the file is damaged or of another layout."""
    import numpy as np
    from py3langid.modelio import _to_array

    try:
        with np.load(path, allow_pickle=False) as data:
            return (data["ptc"], data["pc"], data["classes"].tolist(), _to_array(data["nextmove"]),
                    _to_array(data["nextmove_row"]), data["out_feat"].tolist())
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        path.unlink(missing_ok=True)
        return None
