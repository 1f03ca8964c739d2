"""aistack._adopt: a lookup's "not found" is None; any other failure is raised."""

import pulumi
import pytest

from aistack._adopt import adopting, found


@pytest.mark.parametrize(
    "message",
    [
        # terraform-provider-google data sources (HandleDataSourceNotFoundError).
        "invoke of gcp:iam/getWorkloadIdentityPool:getWorkloadIdentityPool failed: "
        "projects/p/locations/global/workloadIdentityPools/x not found",
        # ECR's error for a name it does not hold.
        "RepositoryNotFoundException: The repository with name 'a/b' does not exist",
        "googleapi: Error 404: The resource 'projects/p/zones/z/instances/n' was not found",
    ],
)
def test_a_lookup_that_finds_nothing_answers_none(message):
    def lookup():
        raise Exception(message)

    assert found(lookup) is None


def test_any_other_failure_is_raised_rather_than_guessed():
    def lookup():
        raise Exception("googleapi: Error 403: Permission 'iam.workloadIdentityPools.get' denied")

    with pytest.raises(Exception, match="403"):
        found(lookup)


def test_adopting_adds_the_import_option_only_for_an_id():
    opts = pulumi.ResourceOptions(retain_on_delete=True)
    assert adopting(opts, None) is opts
    merged = adopting(opts, "projects/p/locations/l/repositories/r")
    assert merged.import_ == "projects/p/locations/l/repositories/r"
    assert merged.retain_on_delete
