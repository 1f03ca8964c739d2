"""AIS-C3-03: SNS topics that carry budget or anomaly alerts are KMS-encrypted and TLS-only."""

import fnmatch
import json
from collections.abc import Iterator

from aistack.engine.graph import StackGraph
from aistack.policy import Verdict, fail, ok, rule
from aistack.queries import as_list

BUDGET = "aws:budgets/budget:Budget"
ANOMALY_SUBSCRIPTION = "aws:costexplorer/anomalySubscription:AnomalySubscription"
TOPIC = "aws:sns/topic:Topic"
TOPIC_POLICY = "aws:sns/topicPolicy:TopicPolicy"
# AWS's own SNS key: its policy cannot be edited, so Budgets and Cost Anomaly Detection
# cannot use it and their alerts to such a topic are silently dropped.
AWS_MANAGED_SNS_KEY = "alias/aws/sns"


def alert_topic_arns(graph: StackGraph) -> set[str]:
    """ARNs of the SNS topics that budgets and anomaly subscriptions publish to."""
    arns: set[str] = set()
    for budget in graph.of_type(BUDGET):
        for notification in budget.inputs.get("notifications") or []:
            arns.update(str(a) for a in notification.get("subscriberSnsTopicArns") or [])
    for subscription in graph.of_type(ANOMALY_SUBSCRIPTION):
        for subscriber in subscription.inputs.get("subscribers") or []:
            if subscriber.get("type") == "SNS" and subscriber.get("address"):
                arns.add(str(subscriber["address"]))
    return arns


def denies_insecure_transport(document: object, topic_arn: str) -> bool:
    """Whether a policy document denies everyone publishing to `topic_arn` without TLS."""
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except ValueError:
            return False
    if not isinstance(document, dict):
        return False
    for statement in as_list(document.get("Statement")):
        if not isinstance(statement, dict) or statement.get("Effect") != "Deny":
            continue
        principal = statement.get("Principal")
        if principal != "*" and not (isinstance(principal, dict) and principal.get("AWS") == "*"):
            continue
        actions = {str(a).lower() for a in as_list(statement.get("Action"))}
        if not actions & {"*", "sns:*", "sns:publish"}:
            continue
        if not any(
            fnmatch.fnmatchcase(topic_arn, str(r)) for r in as_list(statement.get("Resource"))
        ):
            continue
        conditions = {
            key.lower(): value for key, value in (statement.get("Condition") or {}).items()
        }
        secure = {k.lower(): v for k, v in (conditions.get("bool") or {}).items()}
        if str(secure.get("aws:securetransport")).lower() == "false":
            return True
    return False


@rule(
    id="AIS-C3-03",
    checklist=["C3"],
    info="SNS topics receiving budget or anomaly alerts use a customer KMS key and deny "
    "access without TLS.",
    why="Alert topics carry the account's spend and feed automation such as the kill "
    "switch; they are encrypted at rest and refuse plain HTTP. The AWS-managed SNS key does "
    "not count: its policy cannot admit budgets.amazonaws.com, so alerts would be dropped.",
    fix="Use aws.BudgetGuard, or set kms_master_key_id to a customer key whose policy lets "
    "budgets.amazonaws.com and costalerts.amazonaws.com use kms:GenerateDataKey* and "
    "kms:Decrypt, and add a TopicPolicy statement denying SNS:* (or SNS:Publish) to '*' "
    "when aws:SecureTransport is false.",
)
def check(graph: StackGraph) -> Iterator[Verdict]:
    topics = {str(t.outputs.get("arn")): t for t in graph.of_type(TOPIC)}
    policies = graph.of_type(TOPIC_POLICY)
    # Topics outside this stack cannot be judged from its graph; only its own are.
    for arn in sorted(alert_topic_arns(graph) & topics.keys()):
        topic = topics[arn]
        key = str(topic.inputs.get("kmsMasterKeyId") or "")
        problems = []
        if not key:
            problems.append("is not encrypted with KMS")
        elif key == AWS_MANAGED_SNS_KEY or key.endswith(":" + AWS_MANAGED_SNS_KEY):
            problems.append(
                "uses the AWS-managed SNS key, which Budgets cannot use (alerts are dropped)"
            )
        documents = [p.inputs.get("policy") for p in policies if p.inputs.get("arn") == arn]
        documents.append(topic.inputs.get("policy"))
        if not any(denies_insecure_transport(document, arn) for document in documents):
            problems.append("has no policy denying access without TLS (aws:SecureTransport)")
        if problems:
            yield fail(topic, "alert topic " + "; ".join(problems) + ".")
        else:
            yield ok(topic, "alert topic is encrypted with a customer key and TLS-only.")
