"""Run archives: one self-contained, versioned file per run (``.cvs.zip``) that carries a run
out of its store — to a colleague, to CI, into another store — and that ``compare`` opens alone.

Example::

    import convoscope as cs
    archive = cs.read_run_archive("run.cvs.zip")
    archive.manifest["counts"], archive.spec["judge"]
    verdicts = archive.verdicts()          # the run's final verdicts
"""

from convoscope.archive._export import export_run
from convoscope.archive._format import FORMAT, SCHEMA_VERSION, SUFFIX, is_archive
from convoscope.archive._import import Imported, import_run
from convoscope.archive._read import ArchivedVerdict, RunArchive, read_run_archive

__all__ = [
    "FORMAT",
    "SCHEMA_VERSION",
    "SUFFIX",
    "ArchivedVerdict",
    "Imported",
    "RunArchive",
    "export_run",
    "import_run",
    "is_archive",
    "read_run_archive",
]
