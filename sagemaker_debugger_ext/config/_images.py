"""Rule evaluator images per region, and the region / instance support tables of SDK v2."""

from __future__ import annotations

import re

from .._exceptions import UnsupportedRegionError, field_error_message

__all__ = [
    "DEBUGGER_UNSUPPORTED_REGIONS",
    "DEFAULT_RULE_EVALUATOR_IMAGE",
    "DETAILED_PROFILER_PREFIX",
    "get_rule_container_image_uri",
    "instance_type_disables_profiler",
    "region_supports_debugger",
]

DEFAULT_RULE_EVALUATOR_IMAGE = "DEFAULT_RULE_EVALUATOR_IMAGE"
DETAILED_PROFILER_PREFIX = "DetailedProfilerProcessingJobConfig"

# sagemaker/image_uri_config/debugger.json (identical in v3): region -> ECR account.
_DEBUGGER_ACCOUNTS: dict[str, str] = {
    "af-south-1": "314341159256",
    "ap-east-1": "199566480951",
    "ap-northeast-1": "430734990657",
    "ap-northeast-2": "578805364391",
    "ap-northeast-3": "479947661362",
    "ap-south-1": "904829902805",
    "ap-southeast-1": "972752614525",
    "ap-southeast-2": "184798709955",
    "ca-central-1": "519511493484",
    "cn-north-1": "618459771430",
    "cn-northwest-1": "658757709296",
    "eu-central-1": "482524230118",
    "eu-north-1": "314864569078",
    "eu-south-1": "563282790590",
    "eu-west-1": "929884845733",
    "eu-west-2": "250201462417",
    "eu-west-3": "447278800020",
    "me-south-1": "986000313247",
    "sa-east-1": "818342061345",
    "us-east-1": "503895931360",
    "us-east-2": "915447279597",
    "us-gov-west-1": "515509971035",
    "us-west-1": "685455198987",
    "us-west-2": "895741380848",
}
# sagemaker/image_uri_config/detailed-profiler.json.
_DETAILED_PROFILER_ACCOUNTS: dict[str, str] = {
    "eu-central-1": "482524230118",
    "eu-west-1": "929884845733",
    "il-central-1": "216881608335",
    "us-east-1": "503895931360",
    "us-east-2": "915447279597",
    "us-west-2": "895741380848",
}

DEBUGGER_UNSUPPORTED_REGIONS: frozenset[str] = frozenset(
    {
        "us-iso-east-1",
        "us-isob-east-1",
        "ap-southeast-3",
        "ap-southeast-4",
        "eu-south-2",
        "me-central-1",
        "ap-south-2",
        "eu-central-2",
        "us-gov-east-1",
    }
)


def _domain(region: str) -> str:
    if region.startswith("cn-"):
        return "amazonaws.com.cn"
    if region.startswith("us-iso-"):
        return "c2s.ic.gov"
    if region.startswith("us-isob-"):
        return "sc2s.sgov.gov"
    return "amazonaws.com"


def get_rule_container_image_uri(name: str, region: str) -> str:
    """Return the rule evaluator image for rule ``name`` in ``region``.

    Names starting with ``DetailedProfilerProcessingJobConfig`` get the detailed-profiler
    processing image; every other rule gets ``sagemaker-debugger-rules:latest``.

    Raises:
        UnsupportedRegionError: (a ``ValueError``) when the image does not exist in ``region``.
    """
    if not isinstance(region, str) or not region:
        raise UnsupportedRegionError(field_error_message("region", "an AWS region name such as 'us-west-2'", region))
    detailed = isinstance(name, str) and name.startswith(DETAILED_PROFILER_PREFIX)
    table, repo = (
        (_DETAILED_PROFILER_ACCOUNTS, "detailed-profiler-processing")
        if detailed
        else (_DEBUGGER_ACCOUNTS, "sagemaker-debugger-rules")
    )
    account = table.get(region)
    if account is None:
        image = "detailed-profiler processing" if detailed else "Debugger rule"
        msg = f"Unsupported region: {region!r} has no {image} image; supported regions are {', '.join(sorted(table))}"
        raise UnsupportedRegionError(msg)
    return f"{account}.dkr.ecr.{region}.{_domain(region)}/{repo}:latest"


def region_supports_debugger(region: str | None) -> bool:
    """Whether Debugger hooks and profiling are available in ``region`` (SDK v2 table)."""
    return region not in DEBUGGER_UNSUPPORTED_REGIONS


def instance_type_disables_profiler(instance_type: object) -> bool:
    """True for Trainium instances (``ml.trn*``), where SDK v2 forces ``disable_profiler``."""
    if not isinstance(instance_type, str):
        return False
    match = re.match(r"ml[._]([a-z\d\-]+)\.?\w*", instance_type)
    return bool(match and match.end() == len(instance_type) and match[1].startswith("trn"))
