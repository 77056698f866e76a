"""The check of a Ray cluster's nodes before a run (runs/_ray_nodes.py) when no node has CPUs yet:
an autoscaling cluster's head often has none, and its workers come once work is asked for. The
cluster's side is a scripted fake (named as such): a real cluster without CPUs would wait for
ever; the run on real clusters is tests/runs/test_ray.py."""

import pytest

from convoscope.runs._ray_nodes import check_nodes, worker_cpus

pytest.importorskip("ray")


class FakeRayWithoutCpus:
    """Scripted: one alive head node with no CPUs; ``wait`` refuses to wait for nothing, as
    ``ray.wait`` does (``ValueError: Invalid number of objects to return 0``)."""

    def __init__(self):
        self.sent = 0

    def nodes(self):
        return [{"NodeID": "a" * 56, "Alive": True, "Resources": {"memory": 1.0},
                 "NodeManagerAddress": "10.0.0.1"}]

    def remote(self, **_options):
        fake = self

        class Remote:
            def __init__(self, function):
                self.function = function

            def options(self, **_):
                return self

            def remote(self):
                fake.sent += 1
                return object()

        return Remote

    def wait(self, references, *, num_returns, timeout):
        if num_returns <= 0:
            raise ValueError(f"Invalid number of objects to return {num_returns}.")
        raise AssertionError("only nodes with CPUs are asked")


def test_a_cluster_with_no_cpus_yet_is_left_to_ray_data_without_asking_anything():
    fake = FakeRayWithoutCpus()
    check_nodes(fake)  # before: ValueError from wait(num_returns=0)
    assert fake.sent == 0


@pytest.mark.parametrize(("cluster", "workers", "each", "reserved"), [
    (4.0, 2, 1.0, 1.0),   # room to spare: what was asked
    (4.0, 3, 1.0, 1.0),   # one CPU left for reading: what was asked
    (4.0, 4, 1.0, 0.75),  # every CPU asked for: the workers share three
    (2.0, 2, 1.0, 0.5),   # --workers 2 on two CPUs (hung before)
    (1.0, 1, 1.0, 0.0),   # one CPU: it reads, the worker reserves nothing
    (8.0, 2, 4.0, 3.5),   # big workers: 8 of 8 asked, 7 shared
    (0.0, 8, 1.0, 1.0),   # no CPUs yet (an autoscaler's head): left to Ray
])
def test_workers_that_would_take_every_cpu_leave_one_for_reading_the_items(cluster, workers, each, reserved):
    assert worker_cpus(cluster, workers, each) == pytest.approx(reserved)
    assert cluster <= 0 or workers * worker_cpus(cluster, workers, each) <= cluster - 1 or cluster < 1
