"""What a dataset is, where it came from and on what basis it may be used (D4-D6, G1).

Cloud-neutral, so `gcp.DatasetBucket` takes it without importing pulumi_aws; the AWS
bucket uses the same model.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from aistack.config import AistackModel

__all__ = ["DatasetMetadata"]


class DatasetMetadata(AistackModel):
    """What a dataset is, where it came from and on what basis it may be used (D4-D6, G1)."""

    name: str = Field(min_length=1, description="Dataset name, e.g. 'support-tickets'.")
    version: str = Field(
        min_length=1, description="The pinned version runs read (D4); never 'latest'."
    )
    source: str = Field(min_length=1, description="Where it came from: URL, system or team (D6).")
    licence: str = Field(
        min_length=1, description="Licence or terms, e.g. 'CC-BY-4.0', 'proprietary' (D6)."
    )
    contains_personal_data: bool = Field(
        False, description="True if any record identifies a person, even pseudonymised (D5)."
    )
    legal_basis: str = Field(
        "",
        description="Documented basis for using personal data (e.g. 'consent', 'contract', "
        "'legitimate interest: DPIA-42'); required when contains_personal_data (D5, G1).",
    )
    anonymised: bool = Field(False, description="True if personal data was anonymised.")

    @model_validator(mode="after")
    def _personal_data_needs_a_basis(self) -> DatasetMetadata:
        if self.version.strip().lower() in {"latest", "current", "head"}:
            raise ValueError(
                f"version {self.version!r} is not a version. Fix: name an immutable "
                "version, e.g. '2024-06-01' or 'v3' (checklist D4)."
            )
        if self.contains_personal_data and not self.anonymised and not self.legal_basis.strip():
            raise ValueError(
                "the dataset holds personal data but records no legal basis (checklist D5, "
                "G1). Fix: set legalBasis to the documented basis, set anonymised: true "
                "once it is anonymised, or exclude the personal data."
            )
        return self
