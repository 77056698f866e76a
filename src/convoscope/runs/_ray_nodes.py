"""Before a run on Ray: can every node that may host a worker run this convoscope?

A node without convoscope (or with another version of it) fails every worker Ray starts there,
and Ray Data starts them again: the run used to end minutes later with Ray's traceback (issue 39,
observation 5: 179 s). One small task per node asks first, and the run stops at once with one
line naming the node. The question is sent by value (see :mod:`convoscope.runs._ray_probe`), so
that it reaches a node that cannot import convoscope at all.
"""

from __future__ import annotations

from typing import Any

from convoscope.errors import ConvoscopeError

# A node that has not answered by then is left to Ray Data: a slow node is never refused.
NODE_ANSWER_S = 120.0


def check_nodes(ray: Any) -> None:
    """Raise :class:`ConvoscopeError` naming each alive node with CPUs that cannot import this
    version of convoscope."""
    from ray import cloudpickle
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from convoscope import __version__
    from convoscope.runs import _ray_probe

    cloudpickle.register_pickle_by_value(_ray_probe)
    probe = ray.remote(num_cpus=0, max_retries=0)(_ray_probe.convoscope_version)
    nodes = {probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False))
             .remote(): node for node in ray.nodes()
             if node.get("Alive") and node.get("Resources", {}).get("CPU", 0) > 0}
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
        raise ConvoscopeError(f"Ray workers cannot run convoscope {__version__} on "
                              + "; ".join(problems)
                              + f" (install convoscope=={__version__} with the same extras on every node)")


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
