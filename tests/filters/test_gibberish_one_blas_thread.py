"""`convoscope gibberish --lang auto` scores the answers py3langid must identify with numpy, whose
OpenBLAS starts one worker thread per core at import; on the benchmark's 50,000 English lines that
worker burned about 0.1 s of CPU waiting for work the identifier never gives it (a vector of 142
languages times a few hundred features: no size worth a second thread). Checked by counting the
process's threads after the command, not by timing."""

import os

import pytest
from gibberish_process import gibberish_then

# Whether numpy came in, the process's threads, and the setting left in its environment.
_SHOW = """
print("numpy" in sys.modules, len(os.listdir("/proc/self/task")),
      os.environ.get("OPENBLAS_NUM_THREADS"))
"""

_BLAS_SETTINGS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def _probe(tmp_path, **settings):
    answers = tmp_path / "answers.txt"
    # The second line has no English function word: py3langid (and numpy) must judge it.
    answers.write_text("The fries were great\nFenway Park history\n", encoding="utf-8")
    env = {name: value for name, value in os.environ.items() if name not in _BLAS_SETTINGS} | settings
    shown = gibberish_then(answers, tmp_path / "flags.jsonl", _SHOW, cwd=tmp_path, env=env)
    numpy_loaded, threads, setting = shown.split()
    return numpy_loaded == "True", int(threads), setting


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2
                    or not os.path.isdir("/proc/self/task"),
                    reason="OpenBLAS starts no worker on one core; threads are counted in /proc")
def test_the_command_identifies_answers_on_one_thread(tmp_path):
    pytest.importorskip("py3langid")
    numpy_loaded, threads, setting = _probe(tmp_path)
    assert numpy_loaded  # the identifier ran
    assert (threads, setting) == (1, "None")  # one thread, and the environment as it was


def test_a_thread_count_the_user_set_is_left_alone(tmp_path):
    pytest.importorskip("py3langid")
    assert _probe(tmp_path, OPENBLAS_NUM_THREADS="2")[2] == "2"
