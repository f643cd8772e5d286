"""neuron_parallel_compile's JSON results (torch-neuronx, with
NEURON_PARALLEL_COMPILE_DUMP_RESULTS=1): `neuron_parallel_compile_results_<time>.json`

`{"compilation_summary": {"true": 3, "false": 1}, "compilation_report": {"<graph>": {"status":
true, "retry": 0, "compile_time": 412.27}, ...}, "start_time": …, "compilation_time": 431.88}`
and `total_neuron_parallel_compile_results_<time>.json` `{"total_neuron_parallel_compile_time":
…}`.

The graphs compile in parallel, so the compile phase's wall time is `compilation_time` (or
the total), not the sum of the graphs' `compile_time`; failed graphs are errors. The "lines"
of its provenance are 1 (the document).
"""

from __future__ import annotations

from typing import Any

from trncost.metrics.logs.base import EventKind, LogFormat, Sink, duration, finite


class NeuronParallelCompileReport(LogFormat):
    name = "neuron_parallel_compile_report"
    title = "neuron_parallel_compile JSON results (NEURON_PARALLEL_COMPILE_DUMP_RESULTS=1)"
    sample = (
        '{"compilation_summary": {"true": 3, "false": 1}, "compilation_report": {"…/model.'
        'hlo_module.pb": {"status": true, "retry": 0, "compile_time": 412.27}}, "compilation_'
        'time": 431.88}'
    )
    yields = "compile seconds (the parallel compile's wall time), failed graphs, graph count"
    whole_file = True
    training = False
    priority = 90

    def matches_document(self, doc: Any) -> bool:
        return isinstance(doc, dict) and (
            "compilation_report" in doc or "total_neuron_parallel_compile_time" in doc
        )

    def parse_document(self, doc: Any, sink: Sink) -> int:
        wall = doc.get("total_neuron_parallel_compile_time", doc.get("compilation_time"))
        seconds = duration(
            finite(float(wall)) if isinstance(wall, int | float) else None,
            "compilation time", 1, sink,
        )  # fmt: skip
        if seconds is not None:
            sink.event(EventKind.compile_seconds, 1, value=seconds)
        report = doc.get("compilation_report") or {}
        failed = sum(1 for r in report.values() if isinstance(r, dict) and r.get("status") is False)
        if failed:
            sink.event(EventKind.compile_failed, 1, value=float(failed))
        return 1
