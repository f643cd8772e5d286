"""A projected estimate waiting on a PENDING price (Trainium3 before its trials and its price)
gets the break-even a PENDING estimate gets: its standing against the cheapest fully priced
estimate of the workload is stored when a version is added, and its report shows it."""

from __future__ import annotations

from tests.integration.test_readiness_watch import CATALOG, _publish, _verified
from tests.support.factories import candidate, instance_quote, workload
from trncost.model import Assumptions
from trncost.settings import Settings
from trncost.wiring import Wiring


def test_a_projected_estimate_with_a_pending_price_has_its_break_even(table, bus):
    services = Wiring(Settings(table_name=table, bus_name=bus.name, catalog=CATALOG))
    services.records.put_workload(workload(), "2026-01-01T00:00:00+00:00")
    # Given trn2 trials only, trn2 priced, trn3 not
    for t in (_verified("t2-a", "trn2.48xlarge"), _verified("t2-b", "trn2.48xlarge")):
        services.trials.record(t, "api")
    _publish(services, instance_quote("trn2.48xlarge", "36"), sid="snap-1")
    trn2 = services.estimates.create("wl-1", candidate("trn2.48xlarge", 2), Assumptions())
    # When trn3 is estimated: projected from trn2, its total a formula in the PENDING price
    trn3 = services.estimates.create("wl-1", candidate("trn3.48xlarge", 2), Assumptions())
    assert trn3.estimate.status == "projected" and trn3.estimate.incomplete
    # Then its stored standing has a break-even against the trn2 estimate
    standing = services.estimates.standing(trn3.estimate_id, "wl-1")
    assert standing is not None and standing.cost_rank is None
    assert standing.break_even is not None and standing.break_even.price_usd is not None
    assert standing.against_estimate_id == trn2.estimate_id
    # And the report reads it (as it does for an incomplete estimate)
    alternative = services.estimates.alternative(trn3)
    assert alternative is not None and alternative.against_estimate_id == trn2.estimate_id
    page = services.estimates.render(trn3.estimate_id).body
    assert trn2.estimate_id in page and 'id="break-even"' in page
