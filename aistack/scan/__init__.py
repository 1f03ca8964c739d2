"""External validators over a recorded stack: checkov on the stack as a Terraform plan, and
every AWS IAM policy document against an IAM action database.

`aistack scan` runs both; tests run them over the example stacks (docs/scan.md).
"""

from aistack.scan.tfplan import terraform_type, to_terraform_plan

__all__ = ["terraform_type", "to_terraform_plan"]
