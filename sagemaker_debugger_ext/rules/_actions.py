"""Rule actions (``action_json``): StopTraining, Email and SMS.

The SDK sends actions as the rule parameter ``action_json``, serialised by
``smdebug_rulesconfig`` with *literal* backslash-quotes, e.g.::

    [{\\"training_job_prefix\\": \\"job\\", \\"name\\": \\"stoptraining\\"}, {\\"endpoint\\": \\"a@b.c\\", \\"name\\": \\"email\\"}]

:func:`parse_action_json` accepts that form, plain JSON, a single object or a list.

StopTraining writes a stop request file when the rule runs inside a local job (the runner
polls it); standalone it lists InProgress SageMaker training jobs whose name starts with the
prefix and stops the job only when exactly one matches (as smdebug). Email and SMS publish
to the SNS topic ``SMDebugRules`` with a subscription filter per endpoint (as smdebug).
Each action runs once per rule process, on the first firing.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from .._exceptions import RuleParameterError, field_error_message
from ..format._files import atomic_write

__all__ = ["SNS_TOPIC_NAME", "ActionSpec", "Actions", "parse_action_json"]

_log = logging.getLogger(__name__)

SNS_TOPIC_NAME = "SMDebugRules"
_ALLOWED = ("stoptraining", "email", "sms")


@attrs.frozen(kw_only=True)
class ActionSpec:
    """One parsed action.

    Attributes:
        name: ``stoptraining``, ``email`` or ``sms``.
        training_job_prefix: For stoptraining: which job to stop.
        endpoint: For email/sms: the address or phone number.
    """

    name: str = attrs.field(validator=attrs.validators.in_(_ALLOWED))
    training_job_prefix: str | None = None
    endpoint: str | None = None


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return json.loads(text.replace('\\"', '"'))


def parse_action_json(text: str | None) -> tuple[ActionSpec, ...]:
    """Parse the ``action_json`` rule parameter.

    Raises:
        RuleParameterError: not JSON, not an object or list of objects, an unknown action
            name, or a missing ``training_job_prefix`` / ``endpoint``.
    """
    if text is None or not str(text).strip():
        return ()
    try:
        data = _loads(str(text))
    except json.JSONDecodeError:
        msg = field_error_message("action_json", "a JSON object or list of objects", text)
        raise RuleParameterError(msg) from None
    entries = [data] if isinstance(data, dict) else data
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        msg = field_error_message("action_json", "a JSON object or list of objects", text)
        raise RuleParameterError(msg)
    specs = []
    for entry in entries:
        lowered = {str(k).lower(): v for k, v in entry.items()}
        name = str(lowered.get("name", "")).lower()
        if name not in _ALLOWED:
            msg = field_error_message("action_json name", f"one of {list(_ALLOWED)}", lowered.get("name"))
            raise RuleParameterError(msg)
        if name == "stoptraining":
            prefix = lowered.get("training_job_prefix")
            if not prefix:
                msg = field_error_message("action_json training_job_prefix", "a non-empty string", prefix)
                raise RuleParameterError(msg)
            specs.append(ActionSpec(name=name, training_job_prefix=str(prefix)))
        else:
            endpoint = lowered.get("endpoint")
            if not endpoint:
                msg = field_error_message(f"action_json endpoint of {name}", "a non-empty string", endpoint)
                raise RuleParameterError(msg)
            specs.append(ActionSpec(name=name, endpoint=str(endpoint)))
    return tuple(specs)


def _atomic_write_json(path: Path, data: dict[str, Any]) -> None:
    atomic_write(path, json.dumps(data, sort_keys=True))


class Actions:
    """The actions of one rule; :meth:`invoke` runs each at most once.

    Args:
        specs: Parsed actions (or an ``action_json`` string).
        rule_name: Name used in messages and the stop request.
        stop_file: Local-mode stop request file; ``None`` uses SageMaker's API.
        region: AWS region for boto3 clients (``None``: boto3's default chain).
        client_factory: ``(service_name) -> boto3 client`` (tests pass their own).
    """

    def __init__(
        self,
        specs: Sequence[ActionSpec] | str | None = (),
        *,
        rule_name: str = "",
        stop_file: str | os.PathLike[str] | None = None,
        region: str | None = None,
        client_factory: Callable[[str], Any] | None = None,
    ) -> None:
        if specs is None or isinstance(specs, str):
            specs = parse_action_json(specs)
        self.specs = tuple(specs)
        self.rule_name = rule_name
        self.stop_file = Path(stop_file) if stop_file is not None else None
        self._region = region
        self._client_factory = client_factory
        self._done = False
        self.log: list[str] = []

    def __bool__(self) -> bool:
        return bool(self.specs)

    def _client(self, service: str) -> Any:
        if self._client_factory is not None:
            return self._client_factory(service)
        import boto3  # AWS clients: only when an action is sent to AWS

        return boto3.client(service, region_name=self._region) if self._region else boto3.client(service)

    def invoke(self, message: str = "") -> list[str]:
        """Run every action (first call only); returns what was done, one line each."""
        if self._done:
            return []
        self._done = True
        done = []
        for spec in self.specs:
            if spec.name == "stoptraining":
                done.append(self._stop_training(spec.training_job_prefix or "", message))
            else:
                done.append(self._notify(spec, message))
        self.log.extend(done)
        for line in done:
            _log.info("%s", line)
        return done

    def _stop_training(self, prefix: str, message: str) -> str:
        reason = f"Rule {self.rule_name} fired. {message}".strip()
        if self.stop_file is not None:
            _atomic_write_json(self.stop_file, {"RuleConfigurationName": self.rule_name, "Reason": reason})
            return f"StopTraining: requested stop of the local job ({self.stop_file})"
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            client = self._client("sagemaker")
            names: list[str] = []
            kwargs: dict[str, Any] = {"NameContains": prefix, "StatusEquals": "InProgress"}
            while True:
                page = client.list_training_jobs(**kwargs)
                names += [
                    j["TrainingJobName"]
                    for j in page.get("TrainingJobSummaries", [])
                    if j["TrainingJobName"].startswith(prefix)
                ]
                if not page.get("NextToken"):
                    break
                kwargs["NextToken"] = page["NextToken"]
            if len(names) != 1:
                return f"StopTraining: {len(names)} InProgress jobs match prefix {prefix!r}; none stopped"
            client.stop_training_job(TrainingJobName=names[0])
            return f"StopTraining: stopped training job {names[0]}"
        except (BotoCoreError, ClientError) as exc:
            return f"StopTraining: failed for prefix {prefix!r}: {exc}"

    def _notify(self, spec: ActionSpec, message: str) -> str:
        from botocore.exceptions import BotoCoreError, ClientError

        endpoint = spec.endpoint or ""
        key = "phone_num" if spec.name == "sms" else "email"
        try:
            sns = self._client("sns")
            topic_arn = sns.create_topic(Name=SNS_TOPIC_NAME)["TopicArn"]
            subs = sns.list_subscriptions_by_topic(TopicArn=topic_arn).get("Subscriptions", [])
            if not any(s.get("Protocol") == spec.name and s.get("Endpoint") == endpoint for s in subs):
                sns.subscribe(
                    TopicArn=topic_arn,
                    Protocol=spec.name,
                    Endpoint=endpoint,
                    Attributes={"FilterPolicy": json.dumps({key: [endpoint]})},
                )
            sns.publish(
                TopicArn=topic_arn,
                Subject=f"SMDebugRule:{self.rule_name} fired",
                Message=f"SMDebugRule:{self.rule_name} fired. {message}".strip(),
                MessageAttributes={key: {"DataType": "String", "StringValue": endpoint}},
            )
            return f"{spec.name.upper() if spec.name == 'sms' else 'Email'}: notified {endpoint} via SNS topic {SNS_TOPIC_NAME}"
        except (BotoCoreError, ClientError) as exc:
            return f"{spec.name}: failed to notify {endpoint}: {exc}"
