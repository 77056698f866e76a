"""Several embedded models in one process never silence it.

llama-cpp-python mutes the C library by pointing file descriptors 1 and 2 at /dev/null and back;
two models doing that at once (two threads) could leave the process's stdout pointing at /dev/null
for good: the README's KPI panel (two embedded models) once printed no summary and no error. The
process is a child so that what reaches its real stdout and stderr can be read.
"""

import subprocess
import sys

import pytest
from patience import PATIENT_S

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.slow

SCRIPT = """
import asyncio, sys
from convoscope.models import GenerateRequest, open_model

async def main():
    for round in range(4):
        models = [open_model(spec) for spec in ("embedded", "embedded", "embedded")]
        request = GenerateRequest(prompt="Hello", max_tokens=2)
        await asyncio.gather(*(model.generate(request) for model in models))
        for model in models:
            await model.aclose()
        print(f"round {round} out", flush=True)
        print(f"round {round} err", file=sys.stderr, flush=True)

asyncio.run(main())
print("end", flush=True)
"""


def test_three_embedded_models_loaded_and_called_at_once_keep_stdout_and_stderr():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=PATIENT_S)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [*(f"round {n} out" for n in range(4)), "end"]
    assert [line for line in done.stderr.splitlines() if line.startswith("round")] == [
        f"round {n} err" for n in range(4)]
