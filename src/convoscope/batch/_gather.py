"""Deferred requests of one endpoint, gathered for the next batch without holding the batch in
memory: each request's line goes to a temporary file (only its key, offset and length stay in
memory) and its request JSON to the ledger in groups. A batch of 50,000 requests (up to 200 MB)
is read back from the file only when it is sent, and then only the lines this worker took."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from typing import IO

RECORD_EVERY = 500  # requests handed to the ledger together while a batch gathers


class Gathering:
    """The lines of one batch in the making (see the module docstring)."""

    def __init__(self) -> None:
        self._spool = tempfile.TemporaryFile(prefix="convoscope-batch-")
        self._where: dict[str, tuple[int, int]] = {}
        self._unrecorded: dict[str, str] = {}
        self.size = 0  # bytes of the lines with their separators

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, key: object) -> bool:
        return key in self._where

    @property
    def keys(self) -> list[str]:
        return list(self._where)

    def add(self, key: str, line: bytes, request_json: str) -> None:
        offset = self._spool.seek(0, os.SEEK_END)
        self._spool.write(line)
        self._where[key] = (offset, len(line))
        self._unrecorded[key] = request_json
        self.size += len(line) + 1

    def unrecorded(self, *, at_least: int = 1) -> dict[str, str]:
        """The request JSON not yet handed to the ledger (once ``at_least`` have gathered), taken."""
        if len(self._unrecorded) < at_least:
            return {}
        taken, self._unrecorded = self._unrecorded, {}
        return taken

    def body(self, keys: Sequence[str], wrapper: tuple[bytes, bytes], separator: bytes) -> IO[bytes]:
        """The batch's body with the lines of ``keys``, in the service's framing, in a temporary
        file read from the start (the caller closes it): written line by line, never whole in
        memory, so it can be uploaded as a stream."""
        self._spool.flush()
        out = tempfile.TemporaryFile(prefix="convoscope-batch-body-")
        out.write(wrapper[0])
        for n, (offset, length) in enumerate(sorted(self._where[key] for key in keys)):
            self._spool.seek(offset)
            out.write(separator + self._spool.read(length) if n else self._spool.read(length))
        out.write(wrapper[1] + (b"\n" if separator == b"\n" else b""))
        out.seek(0)
        return out

    def close(self) -> None:
        self._spool.close()
