"""Where verdicts and runs are kept: SQLite by default, PostgreSQL by URL."""

from convoscope.store._store import DEFAULT_STORE, Store, store_url
from convoscope.store._writer import VerdictWriter

__all__ = ["DEFAULT_STORE", "Store", "VerdictWriter", "store_url"]
