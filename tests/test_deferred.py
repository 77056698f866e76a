"""convoscope._deferred: a module stands in until first used, then is imported once."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_a_deferred_module_is_imported_at_its_first_use_not_before():
    probe = textwrap.dedent("""
        import sys
        from convoscope._deferred import Deferred
        chunks = Deferred("convoscope.store._chunks")
        before = "sqlalchemy" in sys.modules or "convoscope.store._chunks" in sys.modules
        function = chunks.chunk_states
        from convoscope.store._chunks import chunk_states
        print(before, function is chunk_states)
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]


def test_threads_using_a_deferred_module_at_once_get_the_same_functions():
    from concurrent.futures import ThreadPoolExecutor

    from convoscope._deferred import Deferred

    wanted = Deferred("json.decoder")
    with ThreadPoolExecutor(8) as pool:
        found = set(pool.map(lambda _: wanted.JSONDecoder, range(64)))
    import json.decoder

    assert found == {json.decoder.JSONDecoder}


def test_an_unknown_name_is_an_attribute_error_naming_it():
    import pytest

    from convoscope._deferred import Deferred

    with pytest.raises(AttributeError, match="no_such_name"):
        Deferred("json").no_such_name  # noqa: B018
