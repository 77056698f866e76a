"""Every shell and Python block of the first group of docs/*.md pages runs as written (machinery and
conventions: tests/documented.py)."""

from __future__ import annotations

import pytest
from documented import Block, Page, block_params, pages, run_documented_block  # noqa: F401 (a fixture)

# The first group of docs pages (about half the embedded-model time); the others: test_documented_blocks.py.
FIRST_GROUP = {
    "synth.md", "reports.md", "judge-card.md", "campaigns.md", "compare.md", "batch.md", "ci.md",
    "contributing.md", "decisions.md", "endpoints.md",
}


def wanted(page: str) -> bool:
    return page.startswith("docs/") and page.removeprefix("docs/") in FIRST_GROUP


@pytest.mark.parametrize("block", list(block_params(wanted)))
def test_documented_block_runs(block: Block, pages: dict[str, Page], tmp_path_factory, request) -> None:  # noqa: F811
    run_documented_block(block, pages, tmp_path_factory, request)
