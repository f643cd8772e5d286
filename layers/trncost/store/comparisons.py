"""Stored comparisons: immutable records of one analysis of several candidates.

    comparison  pk COMPARISON#<id>  sk COMPARISON  gsi1 WORKLOAD#<wid>#COMPARISONS / <at>#<id>

(keys from trncost.store.schema). A record is written once (conditional) and never updated:
its id is a hash of what it was computed from (the workload, the request with the price
snapshot it used, the trial records, the day when credits are given), so the same request on
the same evidence is the same comparison, and a repeat finds the record instead of writing.
The analysis is stored zlib-compressed (a binary attribute): twelve candidates with their
input tables stay far below DynamoDB's 400 KB item limit.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from trncost.errors import DomainError
from trncost.model.analysis import Analysis
from trncost.model.records import StoredComparison
from trncost.store.base import Repository
from trncost.store.schema import COMPARISON_SK, comparison_pk, workload_comparisons_gsi_pk

# DynamoDB's item limit is 400 KB: keep the compressed analysis clear of it.
MAX_STORED_BYTES = 350_000


class ComparisonStore(Repository):
    def put_comparison(self, record: StoredComparison) -> bool:
        """Write the record once; False when that id is already stored (the same comparison)."""
        packed = zlib.compress(record.analysis.model_dump_json().encode("utf-8"), 6)
        if len(packed) > MAX_STORED_BYTES:
            raise DomainError(
                f"candidates: this comparison's analysis is {len(packed)} bytes compressed, "
                f"more than the {MAX_STORED_BYTES} a stored comparison holds: compare fewer "
                "candidates",
                fields=["candidates"],
            )
        # the request as the caller gave it (unset keys stay unset: its assumptions merge key
        # by key), the analysis apart and compressed
        meta = record.model_dump_json(exclude={"analysis"}, exclude_unset=True)
        item: dict[str, Any] = {
            "pk": comparison_pk(record.comparison_id),
            "sk": COMPARISON_SK,
            "gsi1pk": workload_comparisons_gsi_pk(record.workload_id),
            "gsi1sk": f"{record.created_at}#{record.comparison_id}",
            "record": meta,
            "analysis_zlib": packed,
        }
        return self.put_new(item)

    def get_comparison(self, comparison_id: str) -> StoredComparison | None:
        item = self.item(comparison_pk(comparison_id), COMPARISON_SK)
        if item is None:
            return None
        raw = item["analysis_zlib"]
        packed = bytes(raw.value if hasattr(raw, "value") else raw)
        analysis = Analysis.model_validate_json(zlib.decompress(packed))
        fields = json.loads(item["record"])  # the record's own fields, the request among them
        return StoredComparison.model_validate({**fields, "analysis": analysis})
