"""Neuron compiler, compile-cache and neuron_parallel_compile lines (torch-neuronx /
libneuronxla, optimum-neuron): a companion format, read beside whichever training format a log
is in. The tags change by release (`||NCC_WRAPPER||`, `||NEURON_CC_WRAPPER||`,
`||NEURON_CACHE||`, `||PARALLEL_COMPILE||`, `||NEURON_PARALLEL_COMPILE||`); the messages are
matched, not the tags.

- `No candidate found under …` / `Call compiler with cmd: …`: a cache miss, a compile starts;
  `Exiting with a successfully compiled graph` (without "Using a cached neff") or `Compiler
  status PASS` after a `Call compiler` line: it ended (timed when both lines are);
- `Compiler status PASS` on its own (after a `Compile cache path` line, or a newer compiler's
  `Compilation Successfully Completed`): a graph was compiled — a miss, untimed;
- `Using a cached neff at …`: a cache hit; `Got a cached failed neff`, `Compiler status FAIL`:
  a failed compile (an error);
- neuron_parallel_compile: `Running trial run` (or the trial run's `Extracting graphs … for
  ahead-of-time parallel compilation`) — the training output that follows is its trial run,
  not training, until the parallel phase (`Starting parallel compilations`, `New graph list
  from script`, `Current remaining items`, `No more compile jobs`, the summary); `master grab
  hlos to compile: [...]` and `Total successful compilations: N` count compiled graphs (a
  miss), `Total graphs: 0` says everything came from the cache, `Total failed compilations: N`
  failed graphs. The phase's wall time is `Starting parallel compilations` to the summary, or
  — when the command was timed — bash's `real` after the summary (the whole command).

A line's timestamp is the one before its tag, wherever the line starts (a tqdm bar is often
glued in front of it).
"""

from __future__ import annotations

import re

from trncost.metrics.logs.base import EventKind, LogFormat, Sink, iso_time, number

_TOTAL_FAILED = re.compile(r"Total failed compilations: (?P<n>\d+)")
_TOTAL_OK = re.compile(r"Total successful compilations: (?P<n>\d+)")
_TOTAL_GRAPHS = re.compile(r"Total graphs: (?P<n>\d+)")
_GRAB = re.compile(r"grab hlos to compile: \[(?P<list>[^\]]*)\]")
_REAL = re.compile(r"^real\s+(?:(?P<m>\d+)m)?(?P<s>\d+(?:\.\d+)?)s\s*$")
NPC_ENDS = (
    "Starting parallel compilations",
    "New graph list from script",
    "Current remaining items",
    "No more compile jobs",
    "Compilation summary",
    "Total graphs:",
)


class NeuronCompile(LogFormat):
    name = "neuron_compile"
    title = "Neuron compiler and compile-cache lines (cache hit/miss, neuron_parallel_compile)"
    sample = (
        "2022-04-12 16:21:58.000241: INFO ||NCC_WRAPPER||: Using a cached neff at "
        "/var/tmp/neuron-compile-cache/USER_neuroncc-1.0.47218.0+162039557/MODULE_1820061567"
        "9846498221/…/MODULE_0_SyncTensorsGraph.318_….neff. Exiting with a successfully "
        "compiled graph"
    )
    yields = (
        "compile cache hits and misses, compile seconds (between timed lines; "
        "neuron_parallel_compile's phase or its timed command), failed compiles, "
        "neuron_parallel_compile's trial run (its training output is not read)"
    )
    # the lines that say something (a tag's other lines — `Compile cache path`, the runtime's
    # `||NRT||` — are frequent and say nothing here: not read, so not scanned for)
    keys = (b"_WRAPPER||", b"COMPILE||", b"Compiler status ", b"real\t")
    step_keys = ()
    training = False
    priority = 10

    def __init__(self) -> None:
        self.open_style: str | None = None
        self.npc = False  # the file shows neuron_parallel_compile
        self.trial = False  # inside its trial run
        self.phase_at: float | None = None  # the parallel phase began
        self.summary = False  # its summary was printed

    def parse(self, line: str, number_: int, sink: Sink) -> bool:  # noqa: C901 - one per line kind
        tag = line.find("||")
        at = iso_time(line, max(0, tag - 48), tag) if tag > 0 else iso_time(line, 0, 40)
        if "PARALLEL_COMPILE||" in line or "Extracting graphs" in line:
            return self._parallel(line, number_, at, sink)
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
            elif self.open_style is None:
                sink.event(EventKind.compiled, number_, at=at, value=1.0)
        elif "Current remaining items" in line or "No more compile jobs" in line:
            self._end_trial(number_, sink)
        elif line.startswith(("real", " real")) and self.summary:
            m = _REAL.match(line.strip())
            if m is None:
                return False
            seconds = 60 * float(m.group("m") or 0) + float(m.group("s"))
            sink.event(EventKind.compile_wall, number_, value=seconds, text="whole")
        elif tag < 0 and "Compilation Successfully" not in line:
            return False  # a tagged line is the compiler's, even one that says nothing here
        return True

    def _parallel(self, line: str, number_: int, at: float | None, sink: Sink) -> bool:
        """neuron_parallel_compile's own lines (and its trial run's graph extraction)."""
        if not self.npc:
            self.npc = True
        if "Running trial run" in line or "Extracting graphs" in line:
            self.open_style = None  # the trial run extracts graphs: nothing compiles
            if not self.trial:
                self.trial = True
                sink.event(EventKind.trial_run, number_, value=1.0)
            return True
        if any(end in line for end in NPC_ENDS) or line.rstrip().endswith("{"):
            self._end_trial(number_, sink)
        if "Starting parallel compilations" in line:
            self.phase_at = at
        elif "Compilation summary" in line or line.rstrip().endswith("{"):
            if self.phase_at is not None and at is not None and at >= self.phase_at:
                sink.event(EventKind.compile_wall, number_, value=at - self.phase_at)
            self.phase_at = None
            self.summary = True
        else:
            self._summary(line, number_, at, sink)
        return True

    def _summary(self, line: str, number_: int, at: float | None, sink: Sink) -> None:
        """The graphs it compiled, found cached, or failed to compile."""
        if (m := _GRAB.search(line)) is not None:
            graphs = [g for g in m.group("list").split(",") if g.strip()]
            if graphs:
                sink.event(EventKind.compiled, number_, at=at, value=float(len(graphs)))
        elif (m := _TOTAL_GRAPHS.search(line)) is not None:
            self.summary = True
            if (number(m.group("n")) or 0) == 0:
                sink.event(EventKind.compile_hit, number_, at=at)
        elif (m := _TOTAL_OK.search(line)) is not None:
            self.summary = True
            if (number(m.group("n")) or 0) > 0:
                sink.event(EventKind.compiled, number_, at=at, value=float(m.group("n")))
        elif (m := _TOTAL_FAILED.search(line)) is not None:
            self.summary = True
            if (number(m.group("n")) or 0) > 0:
                sink.event(EventKind.compile_failed, number_, at=at, value=float(m.group("n")))

    def _end_trial(self, number_: int, sink: Sink) -> None:
        if self.trial:
            self.trial = False
            sink.event(EventKind.trial_run, number_, value=0.0)
