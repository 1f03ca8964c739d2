"""`aws.BudgetGuard`: a stack's budget, with daily alerts, anomaly detection and a kill switch.

Checklist C3 asks for a budget with daily alerts, before anything runs. This component sets
up, for one stack:

* a monthly COST budget with ACTUAL alerts at 50/80/100 % and a FORECASTED alert at 100 %,
  and a DAILY COST budget with an ACTUAL alert, both scoped to the stack through the
  `aistack:stack` cost allocation tag (which it activates);
* a cost anomaly monitor on the same tag with a daily subscription, so a spike is reported
  the day after it starts rather than when a threshold falls;
* a KMS-encrypted, TLS-only SNS topic that the alerts publish to, with the alert addresses
  subscribed;
* optionally (`kill_switch`), a Lambda that scales the stack's training capacity to zero
  when the monthly budget's 100 % ACTUAL alert fires, and only then.

AWS Budgets, cost allocation tags and Cost Anomaly Detection are global: AWS serves them
from us-east-1 whatever the provider's region, and their resources take no region. The
topics, their key and the kill switch are regional and live in `region`.
See docs/components/aws/budget-guard.md.

The package follows its sections: `args` (the arguments and their checks), `kill_switch`
(the Lambda's code and what it calls) and `component` (the resources). Besides `__all__`,
the constants the module defined stay importable from here (`X as X`).
"""

from aistack.aws.budget_guard.args import LOG_RETENTION_DAYS, BudgetGuardArgs, cost_filter_value
from aistack.aws.budget_guard.args import MAX_ACTUAL_THRESHOLDS as MAX_ACTUAL_THRESHOLDS
from aistack.aws.budget_guard.args import MAX_EMAILS as MAX_EMAILS
from aistack.aws.budget_guard.args import Percent as Percent
from aistack.aws.budget_guard.component import BUDGETS_PRINCIPAL as BUDGETS_PRINCIPAL
from aistack.aws.budget_guard.component import CLOUDWATCH_PRINCIPAL as CLOUDWATCH_PRINCIPAL
from aistack.aws.budget_guard.component import COST_ALERTS_PRINCIPAL as COST_ALERTS_PRINCIPAL
from aistack.aws.budget_guard.component import KEY_ADMIN_ACTIONS as KEY_ADMIN_ACTIONS
from aistack.aws.budget_guard.component import BudgetGuard
from aistack.aws.budget_guard.kill_switch import KILL_SWITCH_HANDLER

__all__ = [
    "BudgetGuard",
    "BudgetGuardArgs",
    "KILL_SWITCH_HANDLER",
    "LOG_RETENTION_DAYS",
    "cost_filter_value",
]
