"""Before a run on Ray: can every node that may host a worker run this convoscope?

A node without convoscope (or with another version of it) fails every worker Ray starts there,
and Ray Data starts them again: the run used to end minutes later with Ray's traceback (issue 39,
observation 5: 179 s). One small task per node asks first, and the run stops at once with one
line naming the node. The question is sent by value (see :mod:`convoscope.runs._ray_probe`), so
that it reaches a node that cannot import convoscope at all. It is sent as soon as the run is
connected and answered while the run sets up (``ask_nodes``); the answers are read before the
run is recorded.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from convoscope.errors import ConvoscopeError

# A node that has not answered by then is left to Ray Data: a slow node is never refused.
NODE_ANSWER_S = 120.0
# A question sent ahead longer ago than this (a run that failed before it read the answers) is
# sent again: the cluster's nodes may have changed.
ASKED_FRESH_S = 30.0


class NodeCheck:
    """The question, sent to each alive node with CPUs when this is made; :meth:`answers` waits
    for the answers."""

    def __init__(self, ray: Any) -> None:
        from ray import cloudpickle
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from convoscope.runs import _ray_probe

        self.ray, self.sent = ray, time.monotonic()
        cloudpickle.register_pickle_by_value(_ray_probe)
        probe = ray.remote(num_cpus=0, max_retries=0)(_ray_probe.convoscope_version)
        on = NodeAffinitySchedulingStrategy
        self.nodes = {probe.options(scheduling_strategy=on(node["NodeID"], soft=False)).remote(): node
                      for node in ray.nodes()
                      if node.get("Alive") and node.get("Resources", {}).get("CPU", 0) > 0}

    def answers(self) -> None:
        """Raise :class:`ConvoscopeError` naming each node that cannot import this version of
        convoscope."""
        from convoscope import __version__

        ray, nodes = self.ray, self.nodes
        if not nodes:  # none with CPUs yet (an autoscaling cluster's head): Ray Data waits for them
            return
        answered, _ = ray.wait(list(nodes), num_returns=len(nodes), timeout=NODE_ANSWER_S)
        problems = []
        for reference in answered:
            where = nodes[reference].get("NodeManagerAddress") or nodes[reference]["NodeID"][:12]
            try:
                version, error = ray.get(reference)
            except Exception as failure:  # the node could not even run the question
                version, error = None, _last_line(failure)
            if error is not None:
                problems.append(f"node {where}: {error}")
            elif version != __version__:
                problems.append(f"node {where} has convoscope {version}, this process {__version__}")
        if problems:
            raise ConvoscopeError(f"Ray workers cannot run convoscope {__version__} on " + "; ".join(problems)
                                  + f" (install convoscope=={__version__} with the same extras on every"
                                  " node)")


# The question sent ahead for the run about to start in this process (``ask_nodes``).
_asked: NodeCheck | None = None
_asking = threading.Lock()


def ask_nodes(ray: Any) -> None:
    """Send the question now, for the next :func:`check_nodes` of this process to read the
    answers: a run asks as soon as it is connected, and the nodes answer (a worker process
    started on each, about 0.5 s) while it reads its settings and sets up its items."""
    global _asked
    with _asking:
        if _asked is None:
            _asked = NodeCheck(ray)


def check_nodes(ray: Any) -> None:
    """Raise :class:`ConvoscopeError` naming each alive node with CPUs that cannot import this
    version of convoscope (the answers to the question sent ahead, else to one sent now)."""
    global _asked
    with _asking:
        check, _asked = _asked, None
    if check is None or check.ray is not ray or time.monotonic() - check.sent > ASKED_FRESH_S:
        check = NodeCheck(ray)
    check.answers()


def worker_cpus(cluster_cpus: float, workers: int, cpus_per_worker: float) -> float:
    """The CPUs each of ``workers`` actors reserves: ``cpus_per_worker``, unless together they
    would take every CPU the cluster has now and leave none for the tasks that read and cut the
    items; Ray Data then waited for ever (``--workers 2`` on a 2-CPU cluster hung with no word).
    Such workers share all the CPUs but one instead: a judge's worker mostly waits on its calls.
    A cluster with no CPUs yet (an autoscaler's head) is left to Ray."""
    if cluster_cpus <= 0 or workers * cpus_per_worker <= cluster_cpus - 1:
        return cpus_per_worker
    return max(0.0, cluster_cpus - 1) / workers


def _last_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__
