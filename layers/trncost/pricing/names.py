"""Real names only: instance types and regions as AWS names them.

An EC2 instance type must be in botocore's EC2 service model (the `InstanceType` enum of
botocore/data/ec2/<version>/service-2.json); a SageMaker `ml.` type in the SageMaker model's
`TrainingInstanceType` enum, or its part after `ml.` in EC2's. A region must be one of
botocore's partition data (endpoints.json, every partition). New families ship before SDK
updates, so a type or region the operator lists in the stage catalog is accepted even when the
pinned botocore does not know it (Trainium3's `trn3.48xlarge` is newer than botocore 1.44).

The models are read from the installed botocore's data files through its loader (no network),
lazily on the first check and cached: a cold start that never checks a name never reads them.
A name refused is an InvalidInput (422) naming the field, with the close matches
("did you mean p5.48xlarge?").
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from trncost.errors import InvalidInput
from trncost.model.assumptions import Assumptions
from trncost.model.candidate import Candidate
from trncost.model.catalog import Catalog


@lru_cache(maxsize=1)
def _loader() -> Any:
    from botocore.loaders import Loader

    return Loader()


@lru_cache(maxsize=1)
def ec2_instance_types() -> frozenset[str]:
    """Every EC2 instance type the installed botocore's EC2 model names."""
    model = _loader().load_service_model("ec2", "service-2")
    return frozenset(model["shapes"]["InstanceType"]["enum"])


@lru_cache(maxsize=1)
def sagemaker_training_types() -> frozenset[str]:
    """Every SageMaker training instance type (ml.*) the installed botocore names."""
    model = _loader().load_service_model("sagemaker", "service-2")
    return frozenset(model["shapes"]["TrainingInstanceType"]["enum"])


@lru_cache(maxsize=1)
def sagemaker_reserved_types() -> frozenset[str]:
    """Every ml. type SageMaker reserves capacity for (Training Plans), per botocore's model."""
    model = _loader().load_service_model("sagemaker", "service-2")
    return frozenset(model["shapes"]["ReservedCapacityInstanceType"]["enum"])


@lru_cache(maxsize=1)
def known_regions() -> frozenset[str]:
    """Every region of every partition in botocore's endpoint data."""
    data = _loader().load_data("endpoints")
    return frozenset(r for p in data["partitions"] for r in p.get("regions", {}))


def _suggest(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.75)
    return f": did you mean {' or '.join(close)}?" if close else ""


@dataclass(frozen=True)
class KnownNames:
    """botocore's names plus the stage catalog's (`extra_types`, `extra_regions`)."""

    extra_types: frozenset[str] = field(default_factory=frozenset)
    extra_regions: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, instance_types: Iterable[str] = (), regions: Iterable[str] = ()) -> KnownNames:
        return cls(frozenset(instance_types), frozenset(regions))

    def instance_type_known(self, name: str) -> bool:
        if name in self.extra_types:
            return True
        if name.startswith("ml."):
            return name in sagemaker_training_types() or name[3:] in ec2_instance_types()
        return name in ec2_instance_types()

    def check_instance_type(self, name: str, where: str) -> None:
        """InvalidInput naming `where` (a dotted field) unless `name` is a real type."""
        if self.instance_type_known(name):
            return
        if name.startswith("ml."):
            known: set[str] = {
                *sagemaker_training_types(),
                *(f"ml.{t}" for t in ec2_instance_types()),
            }
        else:
            known = set(ec2_instance_types())
        known |= self.extra_types
        raise InvalidInput(
            f"{where}: {name!r} is not an instance type AWS knows (botocore's "
            f"{'SageMaker' if name.startswith('ml.') else 'EC2'} model, nor the stage catalog)"
            + _suggest(name, known),
            fields=[where],
        )

    def check_region(self, name: str, where: str) -> None:
        if name in self.extra_regions or name in known_regions():
            return
        raise InvalidInput(
            f"{where}: {name!r} is not an AWS region (botocore's partition data, nor the stage "
            "catalog)" + _suggest(name, known_regions() | self.extra_regions),
            fields=[where],
        )

    def check_candidate(self, candidate: Candidate, where: str = "candidate") -> None:
        self.check_instance_type(candidate.instance_type, f"{where}.instance_type")
        self.check_region(candidate.region, f"{where}.region")

    def check_assumptions(self, assumptions: Assumptions, where: str = "assumptions") -> None:
        prep = assumptions.data_preparation
        if prep is not None:
            self.check_instance_type(prep.instance_type, f"{where}.data_preparation.instance_type")
            if prep.region is not None:
                self.check_region(prep.region, f"{where}.data_preparation.region")


def for_catalog(catalog: Catalog | None) -> KnownNames:
    """botocore's names plus what the stage catalog lists."""
    if catalog is None:
        return KnownNames()
    return KnownNames.of(catalog.instance_types, catalog.regions)
