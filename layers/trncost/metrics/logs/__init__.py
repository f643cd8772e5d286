"""Training logs → trial records: one module per log format behind one registry.

    base.py        what a format is and what it yields (Step, EventKind, Sink)
    scan.py        detection and streaming (Reader): files, text, CloudWatch Logs events
    timeline.py    the observations folded into per-minute series under the record's keys
    trial.py       the series through the record's own rules (metrics.record) → a TrialRun
                   with the provenance of every figure

Formats (`FORMATS`, in the order `trncost trial import --format` lists them):

    nemo                            NxD Training / NeMo-Megatron on Neuron, NeMo on GPU
    megatron                        Megatron-LM (and Megatron-DeepSpeed)
    nxd_examples                    neuronx-distributed's training examples
    neuron_log                      torch-neuronx tutorials' `LOG … step_loss … throughput`
    hf_trainer                      Hugging Face / optimum-neuron Trainer stdout
    hf_trainer_state                trainer_state.json
    lightning                       PyTorch Lightning progress bars
    deepspeed                       DeepSpeed's throughput timer and log_dist lines
    mllog                           MLPerf Training result logs (:::MLLOG)
    step_lines                      other trainers' step lines (the fallback)
    neuron_compile                  Neuron compiler / compile-cache / neuron_parallel_compile
                                    lines (companion)
    neuron_parallel_compile_report  neuron_parallel_compile's JSON results

`text.py` undoes the shapes a log's text takes on its way to a file (ANSI colours, CloudWatch's
`#015` escapes, launcher prefixes, carriage-return refreshes) and reads tqdm bars; `reading.py`
keeps what the log says figure by figure, for `trial import --explain`.

TensorBoard event files are read on the client side (`trncost_client.tensorboard`, the CLI:
its reader, `tensorboard`, is not a layer dependency).
"""

from __future__ import annotations

from trncost.metrics.logs.base import LogFormat
from trncost.metrics.logs.deepspeed import DeepSpeed
from trncost.metrics.logs.generic import StepLines
from trncost.metrics.logs.hf_trainer import HfTrainer
from trncost.metrics.logs.hf_trainer_state import HfTrainerState
from trncost.metrics.logs.lightning import LightningProgress
from trncost.metrics.logs.megatron import Megatron
from trncost.metrics.logs.mllog import MlLog
from trncost.metrics.logs.nemo import NeMoProgress
from trncost.metrics.logs.neuron_compile import NeuronCompile
from trncost.metrics.logs.neuron_log import NeuronTutorialLog
from trncost.metrics.logs.neuron_parallel_compile import NeuronParallelCompileReport
from trncost.metrics.logs.nxd_examples import NxdExamples

FORMATS: tuple[type[LogFormat], ...] = (
    NeMoProgress,
    Megatron,
    NxdExamples,
    NeuronTutorialLog,
    HfTrainer,
    HfTrainerState,
    LightningProgress,
    DeepSpeed,
    MlLog,
    StepLines,
    NeuronCompile,
    NeuronParallelCompileReport,
)
FORMAT_NAMES = tuple(f.name for f in FORMATS)

__all__ = ["FORMATS", "FORMAT_NAMES", "LogFormat"]
