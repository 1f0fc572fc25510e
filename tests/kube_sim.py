"""Run the pods of a Kubernetes Job (deploy/kubernetes/) as containers of the grading image,
each with exactly the environment, mounts, user, capabilities and limits its manifest gives
it, for tests on a machine without a cluster.

``translate`` reads the manifest and writes Docker's options from it; every field it does not
understand fails the test (``Unsimulated``), so the simulation cannot drift from the manifest
unnoticed. What only a cluster does (scheduling, retries, deadlines, tolerations, requests) is
read and listed in ``CLUSTER_ONLY``, not simulated. The one input that is not in the manifest
is where each PersistentVolumeClaim's data lives (``claims``), as a cluster's storage class
decides it there.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

#: Fields read but not simulated: the cluster's scheduling, retries and bookkeeping.
CLUSTER_ONLY = ("metadata", "backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished",
                "imagePullPolicy", "tolerations", "requests", "restartPolicy", "completionMode",
                "name")


class Unsimulated(ValueError):
    """A manifest field the translator does not know how to give a container."""


@dataclass
class Pod:
    """One pod of the Job as ``docker containers.create`` arguments."""

    index: int
    image: str
    options: dict = field(default_factory=dict)


def load(path: Path) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def quantity(text) -> float:
    """A Kubernetes quantity (``"1"``, ``"500m"``, ``6Gi``, ``256Mi``) as a number (bytes)."""
    match = re.fullmatch(r"([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G|T)?", str(text))
    if not match:
        raise Unsimulated(f"quantity {text!r}")
    scale = {None: 1, "m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 1e3,
             "M": 1e6, "G": 1e9, "T": 1e12}[match[2]]
    return float(match[1]) * scale


def _pop(d: dict, key: str, default=None):
    return d.pop(key, default) if isinstance(d, dict) else default


def _leftovers(value, where: str) -> None:
    """Fail on anything ``translate`` did not take out of the manifest (what it took leaves
    empty dicts and lists behind)."""
    found = _left(value, where)
    if found:
        raise Unsimulated(f"field(s) not simulated: {', '.join(found)}")


def _left(value, where: str) -> list[str]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _left(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _left(v, f"{where}[{i}]")]
    return [f"{where}={value!r}"]


def denies_all_traffic(policies: list[dict], labels: dict) -> bool:
    """Whether a NetworkPolicy selects pods with ``labels`` and allows nothing either way."""
    for policy in policies:
        spec = policy.get("spec", {})
        selector = spec.get("podSelector", {})
        if set(selector) - {"matchLabels"}:
            raise Unsimulated(f"NetworkPolicy podSelector {selector}")
        wanted = selector.get("matchLabels", {})
        if all(labels.get(k) == v for k, v in wanted.items()) and \
                set(spec.get("policyTypes", [])) == {"Ingress", "Egress"} and \
                not spec.get("ingress") and not spec.get("egress"):
            return True
    return False


def translate(job: dict, policies: list[dict], claims: dict[str, Path],
              images: dict[str, str]) -> tuple[list[Pod], int]:
    """The Job's pods (one per completion index) and how many run at once (parallelism).

    Args:
        job: the Job manifest (``kind: Job``).
        policies: the NetworkPolicy manifests applied with it.
        claims: PersistentVolumeClaim name -> the host folder holding its data.
        images: the manifest's image -> the local image to run.
    """
    job = copy.deepcopy(job)
    taken: list = [job]  # every part popped off the manifest: all must end up empty

    def sub(d: dict, key: str, default=None):
        value = _pop(d, key, default)
        if isinstance(value, (dict, list)):
            taken.append(value)
        return value

    if (_pop(job, "apiVersion"), _pop(job, "kind")) != ("batch/v1", "Job"):
        raise Unsimulated("not a batch/v1 Job")
    _pop(job, "metadata")  # names and labels: the cluster's bookkeeping
    spec = sub(job, "spec")
    indexed = _pop(spec, "completionMode", "NonIndexed") == "Indexed"
    completions, parallelism = _pop(spec, "completions", 1), _pop(spec, "parallelism", 1)
    if not indexed and completions != 1:
        raise Unsimulated("a NonIndexed Job of more than one completion")
    for key in ("backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"):
        _pop(spec, key)
    template = sub(spec, "template")
    labels = _pop(sub(template, "metadata", {}), "labels", {})
    pod = sub(template, "spec")
    if _pop(pod, "restartPolicy") != "Never":
        raise Unsimulated("restartPolicy other than Never")
    if _pop(pod, "automountServiceAccountToken", True) is not False:
        raise Unsimulated("a service account token would be mounted")
    if _pop(pod, "enableServiceLinks", True) is not False:
        raise Unsimulated("service links would add the cluster's services to the environment")
    _pop(pod, "tolerations")  # scheduling onto GPU nodes: the cluster's business
    volumes = {v.pop("name"): v for v in sub(pod, "volumes", [])}
    containers = sub(pod, "containers")
    if len(containers) != 1:
        raise Unsimulated("a pod of more than one container")
    c = containers[0]
    _pop(c, "name")
    _pop(c, "imagePullPolicy")
    image = images[_pop(c, "image")]
    options: dict = {"command": _pop(c, "command"), "labels": {"autograder-test": "kube-sim"},
                     # what every pod gets: its own IPC namespace; no network per the policy
                     "ipc_mode": "private"}
    if not denies_all_traffic(policies, labels):
        raise Unsimulated("no NetworkPolicy denies all traffic to these pods")
    options["network_mode"] = "none"
    env = {}
    for var in sub(c, "env", []):
        name, value = var.pop("name"), var.pop("value")
        if var:
            raise Unsimulated(f"env {name}: {sorted(var)}")
        env[name] = value
    options["environment"] = env
    sc = sub(c, "securityContext", {})
    options["user"] = str(_pop(sc, "runAsUser"))
    if _pop(sc, "runAsNonRoot") and options["user"] == "0":
        raise Unsimulated("runAsNonRoot with runAsUser 0")
    if _pop(sc, "allowPrivilegeEscalation") is not False:
        raise Unsimulated("allowPrivilegeEscalation must be false")
    options["security_opt"] = ["no-new-privileges"]
    options["read_only"] = bool(_pop(sc, "readOnlyRootFilesystem"))
    caps = sub(sc, "capabilities", {})
    options["cap_drop"], options["cap_add"] = _pop(caps, "drop", []), _pop(caps, "add", [])
    if _pop(sub(sc, "seccompProfile", {}), "type") != "RuntimeDefault":
        raise Unsimulated("seccompProfile other than RuntimeDefault")  # Docker's default one
    res = sub(c, "resources", {})
    limits, requests = sub(res, "limits", {}), sub(res, "requests", {})
    for key in list(requests):
        if key in limits and quantity(requests[key]) > quantity(limits[key]):
            raise Unsimulated(f"request {key} above its limit")
        requests.pop(key)
    options["nano_cpus"] = int(quantity(limits.pop("cpu")) * 1e9)
    options["mem_limit"] = options["memswap_limit"] = int(quantity(limits.pop("memory")))
    if "nvidia.com/gpu" in limits:
        import docker

        options["device_requests"] = [docker.types.DeviceRequest(
            count=int(limits.pop("nvidia.com/gpu")), capabilities=[["gpu"]])]
    mounts, tmpfs = [], {}
    for m in sub(c, "volumeMounts", []):
        name, target, readonly = m.pop("name"), m.pop("mountPath"), m.pop("readOnly", False)
        volume = volumes[name]
        if "persistentVolumeClaim" in volume:
            pvc = sub(volume, "persistentVolumeClaim")
            readonly = pvc.pop("readOnly", False) or readonly
            mounts.append({"source": str(claims[pvc.pop("claimName")]), "target": target,
                           "read_only": readonly})
        elif "emptyDir" in volume:
            empty = sub(volume, "emptyDir")
            if empty.pop("medium", None) != "Memory":
                raise Unsimulated(f"volume {name}: an emptyDir on disk")
            # an emptyDir is created 0777 (pod_entry makes /tmp sticky itself)
            tmpfs[target] = f"size={int(quantity(empty.pop('sizeLimit')))},mode=0777"
        else:
            raise Unsimulated(f"volume {name}: {sorted(volume)}")
    options["tmpfs"] = tmpfs
    _leftovers(taken, "job")
    pods = []
    for index in range(completions):
        opts = copy.deepcopy(options)
        if indexed:
            opts["environment"]["JOB_COMPLETION_INDEX"] = str(index)  # Kubernetes sets it
        from docker.types import Mount

        opts["mounts"] = [Mount(m["target"], m["source"], type="bind", read_only=m["read_only"])
                          for m in mounts]
        pods.append(Pod(index, image, opts))
    return pods, parallelism
