"""The response cache: hits, keys that see every setting, persistence, errors never cached."""

import asyncio

import pytest

from convoscope.models import CachedModel, GenerateRequest, Generation, ModelError, ResponseCache


class FakeCountingModel:
    """A scripted stand-in that counts calls (the cache logic is what is under test)."""

    name = "fake:counter"

    def __init__(self, fail=False, delay=0.0):
        self.calls = 0
        self.fail = fail
        self.delay = delay

    async def generate(self, request):
        self.calls += 1
        await asyncio.sleep(self.delay)
        if self.fail:
            raise ModelError("backend down")
        return Generation(text=f"answer to {request.prompt}", model=self.name, prompt_tokens=7,
                          latency_s=0.5)

    async def aclose(self):
        pass


async def test_second_identical_request_is_a_hit(tmp_path):
    inner = FakeCountingModel()
    model = CachedModel(inner, ResponseCache(tmp_path / "cache.db"))
    first = await model.generate(GenerateRequest(prompt="a"))
    second = await model.generate(GenerateRequest(prompt="a"))
    assert inner.calls == 1
    assert (first.cached, second.cached) == (False, True)
    assert second.text == first.text and second.prompt_tokens == 7 and second.latency_s == 0.0


@pytest.mark.parametrize("change", [{"prompt": "b"}, {"temperature": 0.7}, {"max_tokens": 3}, {"seed": 1},
                                    {"json_schema": {"type": "object"}},
                                    {"next_token_candidates": ("1", "2")}, {"top_p": 0.9},
                                    {"presence_penalty": 0.6}])
async def test_every_setting_is_part_of_the_key(tmp_path, change):
    inner = FakeCountingModel()
    model = CachedModel(inner, ResponseCache(tmp_path / "cache.db"))
    await model.generate(GenerateRequest(prompt="a"))
    await model.generate(GenerateRequest(**{"prompt": "a", **change}))
    assert inner.calls == 2


async def test_the_cache_survives_a_restart(tmp_path):
    # A restart ends the first process: its cache is closed (at exit at the latest) before the
    # second one opens the file. Without the close, the second could open the file before the
    # first's grouped commit landed (the test then depended on timing and on test order).
    with ResponseCache(tmp_path / "c.db") as cache:
        await CachedModel(FakeCountingModel(), cache).generate(GenerateRequest(prompt="a"))
    inner = FakeCountingModel()
    with ResponseCache(tmp_path / "c.db") as cache:
        again = await CachedModel(inner, cache).generate(GenerateRequest(prompt="a"))
    assert inner.calls == 0 and again.cached


async def test_errors_are_not_cached(tmp_path):
    cache = ResponseCache(tmp_path / "c.db")
    with pytest.raises(ModelError):
        await CachedModel(FakeCountingModel(fail=True), cache).generate(GenerateRequest(prompt="a"))
    assert len(cache) == 0


async def test_identical_requests_in_flight_share_one_call(tmp_path):
    inner = FakeCountingModel(delay=0.05)
    model = CachedModel(inner, ResponseCache(tmp_path / "c.db"))
    results = await asyncio.gather(*(model.generate(GenerateRequest(prompt="a")) for _ in range(5)))
    assert inner.calls == 1
    assert sum(not result.cached for result in results) == 1


def test_keys_made_before_sampling_settings_existed_still_match():
    # The old key of a request that leaves top_p / presence_penalty unset is the key it had
    # before those fields were added: such a cache is still read (next test).
    import hashlib
    import json

    from convoscope.models._cache import legacy_cache_key

    request = GenerateRequest(prompt="a", temperature=0.3)
    old = request.model_dump(mode="json", exclude={"top_p", "presence_penalty"})
    payload = json.dumps({"model": "m", "request": old}, sort_keys=True, ensure_ascii=False)
    assert legacy_cache_key("m", request) == hashlib.sha256(payload.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("prefetched", [False, True])
async def test_a_cache_written_with_the_old_keys_still_answers(tmp_path, prefetched):
    # Keys are now cut from the request's one serialisation; a cache file written before holds
    # the old keys, and an upgrade must not pay for its answers again.
    import sqlite3

    from convoscope.models._cache import legacy_cache_key

    request = GenerateRequest(prompt="kept", temperature=0.3)
    ResponseCache(tmp_path / "c.db").close()
    with sqlite3.connect(tmp_path / "c.db") as connection:
        connection.execute("insert into responses (key, model, generation) values (?, ?, ?)",
                           (legacy_cache_key("fake:counter", request), "fake:counter",
                            Generation(text="stored before", model="fake:counter").model_dump_json()))
    inner = FakeCountingModel()
    model = CachedModel(inner, ResponseCache(tmp_path / "c.db"))
    if prefetched:
        model.prefetch([request])
    result = await model.generate(request)
    assert (result.text, result.cached, inner.calls) == ("stored before", True, 0)
    await model.aclose()
    model.cache.close()


def test_a_cache_with_only_new_keys_never_asks_for_old_ones(tmp_path, monkeypatch):
    # The old key costs a second serialisation of the request: only caches that hold old keys pay it.
    import convoscope.models._cache as cache_module

    with ResponseCache(tmp_path / "c.db") as cache:
        cache.put(cache_module.cache_key("m", GenerateRequest(prompt="a")), generation(1))
    monkeypatch.setattr(cache_module, "legacy_cache_key", lambda *_: pytest.fail("old key computed"))
    model = CachedModel(FakeCountingModel(), ResponseCache(tmp_path / "c.db"))
    model.prefetch([GenerateRequest(prompt="b")])
    asyncio.run(model.generate(GenerateRequest(prompt="c")))
    model.cache.close()


def generation(number):
    return Generation(text=f"answer {number}", model="fake:counter")


def test_writes_are_committed_in_groups_at_synchronous_normal(tmp_path):
    # Before: one commit (one fdatasync at synchronous=FULL) per answer, on the event loop.
    cache = ResponseCache(tmp_path / "c.db")
    for number in range(2000):
        cache.put(f"k{number}", generation(number))
    cache.flush()
    assert cache.commits < 200
    assert cache._reader.execute("pragma synchronous").fetchone()[0] == 1  # NORMAL
    cache.close()


def test_a_put_is_readable_at_once_and_on_disk_after_close(tmp_path):
    cache = ResponseCache(tmp_path / "c.db")
    cache.put("k", generation(1))
    assert cache.get("k").text == "answer 1"
    cache.close()
    again = ResponseCache(tmp_path / "c.db")
    assert again.get("k").text == "answer 1" and len(again) == 1
    again.close()


def test_two_caches_on_one_file_lose_nothing_when_writing_at_once(tmp_path):
    import threading

    first, second = ResponseCache(tmp_path / "c.db"), ResponseCache(tmp_path / "c.db")

    def fill(cache, prefix):
        for number in range(300):
            cache.put(f"{prefix}{number}", generation(number))

    threads = [threading.Thread(target=fill, args=(cache, prefix))
               for cache, prefix in ((first, "a"), (second, "b"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    first.flush()
    second.flush()
    assert len(first) == len(second) == 600
    first.close()
    second.close()


async def test_closing_a_cached_model_flushes_the_shared_cache(tmp_path):
    cache = ResponseCache(tmp_path / "c.db")
    model = CachedModel(FakeCountingModel(), cache)
    await model.generate(GenerateRequest(prompt="a"))
    await model.aclose()
    assert cache._queue.empty() and not cache._pending
    cache.close()
