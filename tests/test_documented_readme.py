"""Every shell and Python block of README.md runs as written (machinery and conventions:
tests/documented.py)."""

from __future__ import annotations

import pytest
from documented import Block, Page, block_params, pages, run_documented_block  # noqa: F401 (a fixture)


def wanted(page: str) -> bool:
    return page == "README.md"


@pytest.mark.parametrize("block", list(block_params(wanted)))
def test_documented_block_runs(block: Block, pages: dict[str, Page], tmp_path_factory, request) -> None:  # noqa: F811
    run_documented_block(block, pages, tmp_path_factory, request)
