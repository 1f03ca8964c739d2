"""The aistack reference stack: the whole AWS AI platform, configured from Pulumi.<stack>.yaml.

Run offline with `make preview` (or `aistack preview`); deploy with `pulumi up`.
"""

import pulumi
import pulumi_aws as aws

from aistack.config import Governance

config = pulumi.Config("aistack")
region = pulumi.Config("aws").require("region")
stack_id = f"{pulumi.get_project()}-{pulumi.get_stack()}"
governance = Governance.parse(config.require_object("governance"), where="governance")

problem = governance.region_problem(region, "aws:region")
if problem is not None:
    from aistack.errors import ConfigError

    raise ConfigError([problem])

# Every resource in the stack carries the governance tags; budgets filter on the stack tag.
provider = aws.Provider(
    "aws",
    region=region,
    default_tags=aws.ProviderDefaultTagsArgs(tags=governance.aws_tags(stack_id)),
)

pulumi.export("region", region)
pulumi.export("stack_tag", stack_id)
