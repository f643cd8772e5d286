"""Neuron compiler and compile-cache lines (torch-neuronx / libneuronxla, optimum-neuron):
a companion format, read beside whichever training format a log is in.

- `… INFO ||NCC_WRAPPER||: No candidate found under …` or `||NEURON_CC_WRAPPER||: Call compiler
  with cmd: …`: a cache miss, a compile starts;
- `… ||NCC_WRAPPER||: Exiting with a successfully compiled graph` (without "Using a cached
  neff"), or `Compiler status PASS` after a `Call compiler` line: it ended;
- `… Using a cached neff at …`: a cache hit;
- `Got a cached failed neff`, `Compiler status FAIL`: a failed compile (an error);
- `||NEURON_PARALLEL_COMPILE||: Total failed compilations: N` (neuron_parallel_compile).

Compile seconds are measured only between two timed lines of the same compile; a compile
whose end is not timed counts as a miss without seconds.
"""

from __future__ import annotations

import re

from trncost.metrics.logs.base import EventKind, LogFormat, Sink, iso_time, number

_TOTAL_FAILED = re.compile(r"Total failed compilations: (?P<n>\d+)")
_TOTAL_OK = re.compile(r"Total successful compilations: (?P<n>\d+)")


class NeuronCompile(LogFormat):
    name = "neuron_compile"
    title = "Neuron compiler and compile-cache lines (cache hit/miss, neuron_parallel_compile)"
    sample = (
        "2022-04-12 16:21:58.000241: INFO ||NCC_WRAPPER||: Using a cached neff at "
        "/var/tmp/neuron-compile-cache/USER_neuroncc-1.0.47218.0+162039557/MODULE_1820061567"
        "9846498221/…/MODULE_0_SyncTensorsGraph.318_….neff. Exiting with a successfully "
        "compiled graph"
    )
    yields = "compile cache hits and misses, compile seconds (between timed lines), failed compiles"
    keys = (b"_WRAPPER||", b"COMPILE||", b"Compiler status ")
    step_keys = ()
    training = False
    priority = 10

    def __init__(self) -> None:
        self.open_style: str | None = None

    def parse(self, line: str, number_: int, sink: Sink) -> bool:  # noqa: C901 - one per line kind
        at = iso_time(line, 0, 40)
        if "Using a cached neff" in line:
            sink.event(EventKind.compile_hit, number_, at=at)
        elif "Got a cached failed neff" in line or "Compiler status FAIL" in line:
            sink.event(EventKind.compile_failed, number_, at=at, value=1.0)
        elif "No candidate found under" in line:
            self.open_style = "ncc"
            sink.event(EventKind.compile_start, number_, at=at)
        elif "Call compiler with cmd" in line:
            self.open_style = "neuron_cc"
            sink.event(EventKind.compile_start, number_, at=at)
        elif "Exiting with a successfully compiled graph" in line:
            if self.open_style == "ncc":
                sink.event(EventKind.compile_end, number_, at=at)
            self.open_style = None
        elif "Compiler status PASS" in line:
            if self.open_style == "neuron_cc":
                sink.event(EventKind.compile_end, number_, at=at)
                self.open_style = None
        elif "Total successful compilations" in line:
            m = _TOTAL_OK.search(line)
            if m is not None and (number(m.group("n")) or 0) > 0:
                sink.event(EventKind.compiled, number_, at=at, value=float(m.group("n")))
        elif "Total failed compilations" in line:
            m = _TOTAL_FAILED.search(line)
            if m is not None and (number(m.group("n")) or 0) > 0:
                sink.event(EventKind.compile_failed, number_, at=at, value=float(m.group("n")))
        return True
