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
    first = CachedModel(FakeCountingModel(), ResponseCache(tmp_path / "c.db"))
    await first.generate(GenerateRequest(prompt="a"))
    inner = FakeCountingModel()
    again = await CachedModel(inner, ResponseCache(tmp_path / "c.db")).generate(GenerateRequest(prompt="a"))
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
    # The key of a request that leaves top_p / presence_penalty unset is the key it had before
    # those fields were added: a user's cache stays warm across the upgrade.
    import hashlib
    import json

    from convoscope.models._cache import cache_key

    request = GenerateRequest(prompt="a", temperature=0.3)
    old = request.model_dump(mode="json", exclude={"top_p", "presence_penalty"})
    payload = json.dumps({"model": "m", "request": old}, sort_keys=True, ensure_ascii=False)
    assert cache_key("m", request) == hashlib.sha256(payload.encode("utf-8")).hexdigest()
