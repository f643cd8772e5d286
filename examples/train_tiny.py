"""A tiny but real training loop (numpy) that speaks the trial agent's line protocol.

It trains a small next-token softmax model on a synthetic corpus, checkpoints, restores and
evaluates, printing `TRNCOST {...}` lines the agent measures (trncost_client.agent.protocol):

    trncost trial run --local -- python examples/train_tiny.py --steps 60

Under `make run` the run then becomes a trial record of the demo workload (tiny-demo), and
its estimate gets a new version by itself when the run moves its figures. In a trial plan with
the local launcher each phase runs it with that phase's steps (TRNCOST_STEPS, which the
launchers set for every run; --steps wins).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def say(event: str, **fields: object) -> None:
    print("TRNCOST " + json.dumps({"event": event, **fields}), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=int(os.environ.get("TRNCOST_STEPS") or 60))
    parser.add_argument("--batch", type=int, default=64, help="sequences per step")
    parser.add_argument("--seq", type=int, default=128, help="tokens per sequence")
    parser.add_argument("--vocab", type=int, default=256)
    parser.add_argument("--checkpoint-every", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)

    # A synthetic corpus with structure to learn: token t+1 depends on token t.
    v = args.vocab
    transition = rng.dirichlet(np.full(v, 0.05), size=v)
    t0 = time.perf_counter()
    weights = rng.normal(0, 0.01, size=(v, v))  # "compile": build the model and first batch
    say("compile", seconds=round(time.perf_counter() - t0 + 0.05, 4), cache_hit=False)

    def batch() -> tuple[np.ndarray, np.ndarray]:
        start = rng.integers(0, v, size=args.batch)
        seqs = np.empty((args.batch, args.seq + 1), dtype=np.int64)
        seqs[:, 0] = start
        cdf = transition.cumsum(axis=1)
        for i in range(args.seq):
            u = rng.random(args.batch)
            seqs[:, i + 1] = (cdf[seqs[:, i]] < u[:, None]).sum(axis=1).clip(max=v - 1)
        return seqs[:, :-1].ravel(), seqs[:, 1:].ravel()

    def loss_and_grad(x: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
        logits = weights[x]
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        loss = float(-np.log(p[np.arange(len(y)), y] + 1e-12).mean())
        p[np.arange(len(y)), y] -= 1
        grad = np.zeros_like(weights)
        np.add.at(grad, x, p / len(y))
        return loss, grad

    checkpoint = Path(tempfile.mkdtemp(prefix="train_tiny_")) / "weights.npy"
    saved_weights: np.ndarray | None = None
    tokens_per_step = args.batch * args.seq
    for step in range(1, args.steps + 1):
        started = time.perf_counter()
        waited = time.perf_counter()
        x, y = batch()
        data_wait = time.perf_counter() - waited
        loss, grad = loss_and_grad(x, y)
        weights -= 300.0 * grad
        say(
            "step",
            tokens=tokens_per_step,
            loss=round(loss, 5),
            data_wait=round(data_wait, 5),
            seconds=round(time.perf_counter() - started, 5),
        )
        if step == 3:
            say("warmup_done")
        if step % args.checkpoint_every == 0 or (step == args.steps and saved_weights is None):
            saved = time.perf_counter()
            np.save(checkpoint, weights)
            saved_weights = weights.copy()
            say(
                "checkpoint_save",
                seconds=round(time.perf_counter() - saved, 5),
                bytes=checkpoint.stat().st_size,
            )
    restored = time.perf_counter()
    same = saved_weights is not None and bool(np.array_equal(np.load(checkpoint), saved_weights))
    say("checkpoint_restore", seconds=round(time.perf_counter() - restored, 5), ok=same)
    evaluated = time.perf_counter()
    x, y = batch()
    eval_loss, _ = loss_and_grad(x, y)
    say(
        "eval",
        metric="eval_loss",
        value=round(eval_loss, 5),
        seconds=round(time.perf_counter() - evaluated, 5),
    )
    print(
        f"trained {args.steps} steps, {args.steps * tokens_per_step:,} tokens, "
        f"eval_loss {eval_loss:.4f}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
