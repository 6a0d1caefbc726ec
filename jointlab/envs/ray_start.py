"""Start or join Ray quietly, with a clear error instead of a silent hang.

Ray prints start-up INFO lines, deprecation and security warnings and C++ worker log lines
into a script's output; :func:`start_ray` keeps them out (the env runners' own output is not
forwarded to the driver; their exceptions still reach it, and each node keeps its logs under
``/tmp/ray/session_latest/logs``) and checks that
the cluster has the CPUs the env runners will ask for: RLlib otherwise waits for them
forever, printing nothing on a two-core machine.
"""

from __future__ import annotations

import logging
import os
import warnings

from jointlab.errors import ConfigurationError

__all__ = ["start_ray"]


def start_ray(address: str | None = None, *, num_cpus: int | None = None, runners: int = 0) -> str:
    """Join the cluster at ``address`` (or ``RAY_ADDRESS``), else start a private local Ray.

    Args:
        address: A Ray address (``"auto"``, ``"HOST:6379"``); None: ``RAY_ADDRESS`` if set,
            else a local instance that stops with the process.
        num_cpus: CPUs of a local instance (default: all of this machine's).
        runners: Env runners the caller will start (one CPU each); more than the cluster's
            CPUs is an error.

    Returns:
        ``"local Ray, N CPUs"`` or ``"cluster ADDRESS, N CPUs"``.

    Raises:
        ConfigurationError: the cluster has fewer CPUs than ``runners``.
    """
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")  # C++ core-worker log lines
    for name in ("ray", "ray.rllib", "ray.tune", "ray.data"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"ray(\..*)?$")
    import ray

    from jointlab.sim.quiet import quiet_output  # the core worker's start-up line

    address = address or os.environ.get("RAY_ADDRESS")
    with quiet_output():
        if address:
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
            where = f"cluster {address}"
        else:
            ray.init(
                num_cpus=num_cpus,
                include_dashboard=False,
                logging_level=logging.ERROR,
                log_to_driver=False,
            )
            where = "local Ray"
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if runners > cpus:
        ray.shutdown()
        raise ConfigurationError(
            f"{runners} env runners need {runners} CPUs but {where} has {cpus}: RLlib would "
            f"wait for them forever; use at most {max(cpus - 1, 1)} runners here"
        )
    return f"{where}, {cpus} CPUs"
