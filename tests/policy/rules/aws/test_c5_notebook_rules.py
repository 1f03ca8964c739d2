"""AIS-C5-01: Studio idle shutdown and classic notebook instances, compliant and violating."""

import base64

import pulumi_aws as aws

from aistack import aws as aistack_aws

RULE = "AIS-C5-01"
GOVERNANCE = {
    "owner": "ml-platform",
    "costCenter": "research-1234",
    "allowedRegions": ["us-east-1"],
}
ROLE_ARN = "arn:aws:iam::123456789012:role/notebook"


def _notebook(**overrides):
    return aistack_aws.Notebook(
        "nb",
        {
            "governance": GOVERNANCE,
            "region": "us-east-1",
            "users": ["ana"],
            "vpcId": "vpc-0123456789abcdef0",
            "subnetIds": ["subnet-0123456789abcdef0"],
            "securityGroupIds": ["sg-0123456789abcdef0"],
            "executionRoleArn": ROLE_ARN,
            **overrides,
        },
    )


def _idle(state="ENABLED", timeout=60, ceiling=None):
    settings = {"lifecycle_management": state, "idle_timeout_in_minutes": timeout}
    if ceiling is not None:
        settings["max_idle_timeout_in_minutes"] = ceiling
    return {"app_lifecycle_management": {"idle_settings": settings}}


def _domain(jupyter_lab=None, code_editor=None):
    settings = {"execution_role": ROLE_ARN}
    if jupyter_lab is not None:
        settings["jupyter_lab_app_settings"] = jupyter_lab
    if code_editor is not None:
        settings["code_editor_app_settings"] = code_editor
    return aws.sagemaker.Domain(
        "studio",
        domain_name="studio",
        auth_mode="IAM",
        vpc_id="vpc-0123456789abcdef0",
        subnet_ids=["subnet-0123456789abcdef0"],
        default_user_settings=settings,
    )


def test_c5_notebook_component_complies(verdicts):
    assert verdicts(RULE, _notebook) == {"nb-domain": "compliant"}


def test_c5_hand_written_domain_with_idle_shutdown_on_both_apps_complies(verdicts):
    result = verdicts(RULE, lambda: _domain(_idle(timeout=120), _idle(timeout=120)))
    assert result == {"studio": "compliant"}


def test_c5_domain_without_idle_shutdown_violates(verdicts):
    assert verdicts(RULE, lambda: _domain()) == {"studio": "non-compliant"}


def test_c5_domain_with_idle_shutdown_disabled_violates(verdicts):
    result = verdicts(RULE, lambda: _domain(_idle(state="DISABLED"), _idle()))
    assert result == {"studio": "non-compliant"}


def test_c5_idle_timeout_over_four_hours_violates(verdicts):
    result = verdicts(RULE, lambda: _domain(_idle(timeout=480), _idle()))
    assert result == {"studio": "non-compliant"}


def test_c5_users_allowed_to_raise_the_timeout_past_four_hours_violates(verdicts):
    result = verdicts(RULE, lambda: _domain(_idle(timeout=60, ceiling=1440), _idle()))
    assert result == {"studio": "non-compliant"}


def test_c5_notebook_configured_past_four_hours_is_flagged(verdicts):
    result = verdicts(RULE, lambda: _notebook(maxIdleTimeoutMinutes=480))
    assert result == {"nb-domain": "non-compliant"}


def test_c5_code_editor_without_idle_shutdown_violates(verdicts):
    assert verdicts(RULE, lambda: _domain(_idle())) == {"studio": "non-compliant"}


def test_c5_user_profile_switching_idle_shutdown_off_violates(verdicts):
    def program():
        notebook = _notebook()
        aws.sagemaker.UserProfile(
            "night-owl",
            domain_id=notebook.domain_id,
            user_profile_name="night-owl",
            user_settings={
                "execution_role": ROLE_ARN,
                "jupyter_lab_app_settings": _idle(state="DISABLED"),
            },
        )

    result = verdicts(RULE, program)
    assert result == {"nb-domain": "compliant", "night-owl": "non-compliant"}


def test_c5_classic_notebook_instance_without_idle_stop_violates(verdicts):
    def program():
        aws.sagemaker.NotebookInstance(
            "classic", role_arn=ROLE_ARN, instance_type="ml.g5.xlarge", root_access="Disabled"
        )

    assert verdicts(RULE, program) == {"classic": "non-compliant"}


def test_c5_classic_notebook_instance_with_a_non_stopping_lifecycle_violates(verdicts):
    def program():
        setup = aws.sagemaker.NotebookInstanceLifecycleConfiguration(
            "setup",
            name="setup",
            on_start=base64.b64encode(b"#!/bin/bash\npip install -r requirements.txt\n").decode(),
        )
        aws.sagemaker.NotebookInstance(
            "classic",
            role_arn=ROLE_ARN,
            instance_type="ml.t3.medium",
            lifecycle_config_name=setup.name,
        )

    assert verdicts(RULE, program) == {"classic": "non-compliant"}


def test_c5_classic_notebook_instance_with_an_idle_stop_lifecycle_complies(verdicts):
    script = (
        "#!/bin/bash\nset -e\nIDLE_TIME=3600\n"
        "wget -O autostop.py https://raw.githubusercontent.com/aws-samples/"
        "amazon-sagemaker-notebook-instance-lifecycle-config-samples/master/scripts/"
        "auto-stop-idle/autostop.py\n"
        '(crontab -l; echo "*/5 * * * * python3 autostop.py --time $IDLE_TIME") | crontab -\n'
    )

    def program():
        autostop = aws.sagemaker.NotebookInstanceLifecycleConfiguration(
            "autostop", name="autostop", on_start=base64.b64encode(script.encode()).decode()
        )
        aws.sagemaker.NotebookInstance(
            "classic",
            role_arn=ROLE_ARN,
            instance_type="ml.t3.medium",
            lifecycle_config_name=autostop.name,
        )

    assert verdicts(RULE, program) == {"classic": "compliant"}


def test_c5_does_not_apply_without_notebooks(verdicts):
    assert verdicts(RULE, lambda: aws.s3.Bucket("raw")) == {"": "not-applicable"}
