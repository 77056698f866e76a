"""Every shell and Python block of the other docs/*.md pages runs as written, and the rules of the docs
test hold (machinery and conventions: tests/documented.py)."""

from __future__ import annotations

import pytest
from documented import (  # noqa: F401 (pages: a fixture)
    BLOCKS,
    SMALLER,
    Block,
    Page,
    block_params,
    collect_blocks,
    pages,
    run_documented_block,
)
from test_documented_pages import FIRST_GROUP


def wanted(page: str) -> bool:
    return page.startswith("docs/") and page.removeprefix("docs/") not in FIRST_GROUP


@pytest.mark.parametrize("block", list(block_params(wanted)))
def test_documented_block_runs(block: Block, pages: dict[str, Page], tmp_path_factory, request) -> None:  # noqa: F811
    run_documented_block(block, pages, tmp_path_factory, request)


def test_every_block_is_in_exactly_one_module() -> None:
    import test_documented_pages
    import test_documented_readme

    owners = [sum(group(block.page) for group in (wanted, test_documented_pages.wanted,
                                                  test_documented_readme.wanted)) for block in BLOCKS]
    assert owners == [1] * len(BLOCKS)


def test_every_smaller_input_rewrites_a_block() -> None:
    """A substitution that no longer matches its block would silently run the block at full size."""
    for page, pattern, _replacement, reason in SMALLER:
        assert reason, f"{page}: {pattern!r} needs a reason"
        assert any(block.page == page and pattern in block.text for block in BLOCKS), (page, pattern)


def test_every_skip_gives_a_reason_and_skips_are_few() -> None:
    skipped = [block for block in BLOCKS if block.skip_reason]
    assert all(len(block.skip_reason or "") >= 10 for block in skipped), [b.name for b in skipped]
    assert len(skipped) <= len(BLOCKS) // 4, [block.name for block in skipped]


def test_the_collector_finds_blocks_and_skip_markers(tmp_path) -> None:
    page = tmp_path / "page.md"
    page.write_text("text\n\n```bash\necho one\n```\n<!-- docs-test: skip: runs until stopped -->\n"
                    "```python\nif 2:\n    print(2)\n```\n```yaml\na: 1\n```\n- item\n  ```sh\n  echo \\\n"
                    "    three\n  ```\n")
    found = collect_blocks(page, root=tmp_path)
    assert [(b.line, b.lang, b.text, b.skip_reason) for b in found] == [
        (3, "bash", "echo one\n", None), (7, "python", "if 2:\n    print(2)\n", "runs until stopped"),
        (15, "sh", "echo \\\n  three\n", None)]
