"""Long rating files read column-wise: pandas with the pyarrow CSV engine, straight into rater x
item matrices, for files with millions of rows.

:func:`read_ratings` builds one validated object per row, which is what a few thousand ratings
need and what error messages by line want; a million rows take tens of seconds that way. Here
the file is read as columns, checked as columns (a bad row is still named by file, line and
field), and each criterion's matrix is filled with one vectorised assignment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from convoscope.analysis._read import ITEM_ID_NAMES, id_column, parse_value
from convoscope.analysis._tables import RaterMatrix, Rating
from convoscope.errors import ConfigError, LocatedError
from convoscope.items import ColumnMap

FAST_SUFFIXES = (".csv", ".tsv", ".jsonl")
_MISSING_TEXT = ["", "NA", "N/A", "na", "n/a", "nan", "NaN", "null", "NULL", "None", "none"]


def read_frame(path: str | Path, *, columns: ColumnMap | None = None) -> Any:
    """A DataFrame with columns ``item_id``, ``rater``, ``criterion``, ``value`` (and ``system``,
    ``language`` when present), read from .csv, .tsv or .jsonl; line numbers in errors count
    the header as line 1 (CSV) as :func:`read_ratings` does."""
    import pandas as pd

    path, columns = Path(path), columns or ColumnMap()
    if not path.exists():
        raise LocatedError(path, "file not found")
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        frame = _read_csv(path, "\t" if suffix == ".tsv" else ",", columns)
        first_line = 2
    elif suffix == ".jsonl":
        frame = pd.read_json(path, lines=True, dtype=False)
        first_line = 1
    else:
        raise LocatedError(path, f"fast reading takes .csv, .tsv or .jsonl, not {suffix!r}")
    return _standard(frame, path, columns, first_line)


def _read_csv(path: Path, delimiter: str, columns: ColumnMap) -> Any:
    """pyarrow's CSV reader with the id columns dictionary-encoded as they are parsed, so they
    arrive as pandas Categoricals without hashing a million strings a second time."""
    import pyarrow as pa
    from pyarrow import csv

    ids = ITEM_ID_NAMES if columns.id in ITEM_ID_NAMES else (columns.id,)
    names = (*ids, columns.rater, columns.criterion, columns.system, columns.language)
    categories = pa.dictionary(pa.int32(), pa.string())
    options = csv.ConvertOptions(column_types={name: categories for name in names}, null_values=_MISSING_TEXT,
                                 strings_can_be_null=True)
    kind = "TSV" if delimiter == "\t" else "CSV"
    try:
        table = csv.read_csv(path, parse_options=csv.ParseOptions(delimiter=delimiter),
                             convert_options=options)
    except (pa.ArrowInvalid, UnicodeDecodeError) as error:
        raise LocatedError(path, f"cannot read as {kind}: {error}") from None
    return table.to_pandas()


def _standard(frame: Any, path: Path, columns: ColumnMap, first_line: int) -> Any:
    import pandas as pd

    if frame.empty:
        raise LocatedError(path, "no ratings in file")
    wanted = {"item_id": id_column(frame.columns, columns), "rater": columns.rater, "value": columns.value}
    if columns.criterion in frame.columns or columns.default_criterion is None:
        wanted["criterion"] = columns.criterion
    present = ", ".join(sorted(map(str, frame.columns)))
    for name in wanted.values():
        if name not in frame.columns:
            raise LocatedError(path, f"missing (columns present: {present})", line=first_line, field=name)
    out = pd.DataFrame({key: frame[name] for key, name in wanted.items()})
    for key in ("system", "language"):
        name = getattr(columns, key)
        if name in frame.columns:  # blank means unknown, as for the row reader
            text = frame[name].astype("string").str.strip()
            out[key] = text.astype(object).where(text.notna() & (text != ""), None)
    for key in ("item_id", "rater", "criterion"):
        if key in out:
            out[key] = _names(out[key], path, first_line, wanted[key])
    if "criterion" not in out:  # one criterion for the whole file, named by the caller
        out["criterion"] = pd.Categorical.from_codes(np.zeros(len(out), dtype=np.int64),
                                                     categories=[columns.default_criterion])
    out["value"] = _values(out["value"], path, first_line, columns.value)
    row = _first_repeat(out)
    if row is not None:
        problem = (f"rater {out['rater'].iat[row]!r} already rated item {out['item_id'].iat[row]!r} "
                   f"on {out['criterion'].iat[row]!r}")
        raise LocatedError(path, problem, line=first_line + row, field=columns.rater)
    return out


def _first_repeat(out: Any) -> int | None:
    """Row of the first (criterion, rater, item) seen before, or None: counted with bincount when
    the key space is small enough, else hashed."""
    import pandas as pd

    combined, size = np.zeros(len(out), dtype=np.int64), 1
    for key in ("criterion", "rater", "item_id"):
        width = len(out[key].cat.categories)
        combined, size = combined * width + out[key].cat.codes.to_numpy(np.int64), size * width
    if size <= 50_000_000:
        if np.bincount(combined, minlength=size).max() <= 1:
            return None
    repeated = pd.Series(combined).duplicated().to_numpy()
    return int(np.flatnonzero(repeated)[0]) if repeated.any() else None


def _names(column: Any, path: Path, first_line: int, field: str) -> Any:
    """Ids as a Categorical (categories in order of appearance), stripped of surrounding spaces;
    the stripping and the emptiness check look at each distinct value once."""
    import pandas as pd

    if column.dtype.name == "category":
        codes, uniques = column.cat.codes.to_numpy(np.int64), column.cat.categories
    else:
        codes, uniques = pd.factorize(column, sort=False)
    stripped = pd.Series(uniques).astype("string").str.strip()  # vectorised (pyarrow) on distinct values
    clean = stripped.to_numpy(dtype=object)
    if column.dtype.name == "category" and (clean == np.asarray(uniques, dtype=object)).all() \
            and not (clean == "").any():
        if (codes < 0).any():
            raise LocatedError(path, "is empty", line=first_line + int(np.flatnonzero(codes < 0)[0]),
                               field=field)
        return column  # already clean ids, as parsed: nothing to rebuild
    merged, names = pd.factorize(clean, sort=False)
    final = np.where(codes >= 0, merged[np.maximum(codes, 0)], -1)
    blank = np.flatnonzero(names == "")
    empty = (final < 0) | np.isin(final, blank)
    if empty.any():
        raise LocatedError(path, "is empty", line=first_line + int(np.flatnonzero(empty)[0]), field=field)
    return pd.Categorical.from_codes(final, categories=pd.Index(names, dtype=object))


def _values(column: Any, path: Path, first_line: int, field: str) -> Any:
    """Numbers as float (NaN missing); text parsed once per distinct value."""
    if column.dtype.kind in "biuf":
        values = column.astype(np.float64)
        infinite = np.isinf(values.to_numpy())
        if infinite.any():
            row = int(np.flatnonzero(infinite)[0])
            raise LocatedError(path, "is not a finite number", line=first_line + row, field=field)
        return values
    parsed = {}
    for value in column.dropna().unique().tolist():
        try:
            parsed[value] = parse_value(value, path=path, field=field)
        except LocatedError as error:
            row = int(np.flatnonzero((column == value).to_numpy())[0])
            raise LocatedError(path, error.problem, line=first_line + row, field=field) from None
    mapped = column.map(parsed, na_action="ignore")
    if all(isinstance(v, int | float) for v in parsed.values() if v is not None):
        return mapped.astype(np.float64)
    return mapped.astype(object).where(mapped.notna(), None)


def frame_matrices(frame: Any, *, by: str | None = None) -> dict[tuple[str, str | None], RaterMatrix]:
    """One rater x item matrix per criterion (and group), like :func:`rater_matrices`: raters
    sorted, items in order of first appearance."""
    matrices: dict[tuple[str, str | None], RaterMatrix] = {}
    criteria = _categorical(frame["criterion"])
    if by is None:  # split by the criterion's codes: no string keys for a million rows
        codes = criteria.cat.codes.to_numpy()
        for code in np.argsort(criteria.cat.categories.astype(str)):
            part = frame if len(criteria.cat.categories) == 1 else frame[codes == code]
            if len(part):
                name = str(criteria.cat.categories[code])
                matrices[(name, None)] = _matrix(part, name, None)
        return matrices
    unknown = "\ufffe(none)"  # items with no language / system: their own group (None), as in rater_matrices
    groups = frame[by].astype(object).where(frame[by].notna(), unknown).astype(str)
    for (criterion, group), part in frame.groupby([frame["criterion"].astype(str), groups], sort=True,
                                                   observed=True):
        label: str | None = None if group == unknown else str(group)
        matrices[(str(criterion), label)] = _matrix(part, str(criterion), label)
    return matrices


def _matrix(part: Any, criterion: str, group: str | None) -> RaterMatrix:
    import pandas as pd

    item, rater = (_categorical(part[key]) for key in ("item_id", "rater"))
    item_codes, item_index = pd.factorize(item.cat.codes.to_numpy(), sort=False)
    items = item.cat.categories[item_index]
    used = np.unique(rater.cat.codes.to_numpy())
    names = rater.cat.categories[used].to_numpy(dtype=object)
    order = np.argsort(names.astype(str), kind="stable")
    raters = names[order]
    position = np.empty(len(rater.cat.categories), dtype=np.int64)
    position[used[order]] = np.arange(len(used))
    rater_codes = position[rater.cat.codes.to_numpy()]
    values = part["value"].to_numpy()
    numeric = values.dtype.kind == "f"
    matrix = np.full((len(raters), len(items)), np.nan if numeric else None,
                     dtype=np.float64 if numeric else object)
    matrix[rater_codes, item_codes] = values
    return RaterMatrix(criterion, tuple(raters.tolist()), tuple(map(str, items)), matrix, group)


def _categorical(column: Any) -> Any:
    return column if column.dtype.name == "category" else column.astype("category")


def _text(value: Any) -> str | None:
    return None if value is None or value != value else str(value)


REQUIRED = ("criterion", "rater", "value")


def standard_frame(frame: Any) -> Any:
    """A ratings DataFrame in the library's vocabulary: ``item_id`` (``item`` accepted),
    ``criterion``, ``rater``, ``value``; a verdict table (``RunResult.to_pandas()``,
    ``verdicts_to_table``) already is one. A missing column is a ConfigError naming it."""
    if "item_id" not in frame.columns and "item" in frame.columns:
        frame = frame.rename(columns={"item": "item_id"})
    missing = [name for name in ("item_id", *REQUIRED) if name not in frame.columns]
    if missing:
        present = ", ".join(map(str, frame.columns)) or "none"
        raise ConfigError(f"a ratings table needs the columns item_id (or item), criterion, rater and value; "
                          f"missing {', '.join(missing)} (columns present: {present})")
    return frame


def as_ratings(ratings: Any) -> list[Any]:
    """Ratings or verdicts as a list; a DataFrame (see :func:`standard_frame`) becomes
    :class:`Rating` objects, values parsed as the file readers parse them."""
    if not hasattr(ratings, "columns"):
        return list(ratings)
    frame = standard_frame(ratings)
    out = []
    optional = ("system", "language", "unscored_reason", "expected_value")
    extra = [key for key in optional if key in frame.columns]
    for row in frame[["item_id", *REQUIRED, *extra]].itertuples(index=False):
        fields = row._asdict()
        value = fields["value"]
        expected = fields.get("expected_value")
        out.append(Rating(item_id=str(fields["item_id"]), criterion=str(fields["criterion"]),
                          rater=str(fields["rater"]),
                          value=None if _text(value) is None else parse_value(value),
                          unscored_reason=_text(fields.get("unscored_reason")),
                          language=_text(fields.get("language")), system=_text(fields.get("system")),
                          expected_value=None if _text(expected) is None else float(expected)))
    return out
