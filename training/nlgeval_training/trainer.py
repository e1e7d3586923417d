"""Training loop: continual learning over a dimension curriculum with replay, or multi-task training.

Continual learning with experience replay follows UniEval (Zhong et al., 2022, section 3.3): the stages
follow a curriculum, and when stage k introduces its dimensions, ``replay`` (20%) of the data of every
earlier dimension is sampled again and mixed in. The multi-task alternative trains on all dimensions at
once; with ``same_budget`` it sees exactly as many examples as the continual plan.

Features: seeds, length-bucketed batches (short inputs are not padded to long ones), per-group learning
rates (a fresh head needs a far larger one than a pretrained encoder; with the encoder's rate a fresh head stayed at
chance in a measured trial), atomic checkpoints and exact resume, tqdm progress, held-out accuracy and AUC per dimension
after every stage (so forgetting is visible), a JSON-lines log, and data parallelism when started by ``torchrun``
(gloo on CPU, nccl on GPU; gradients averaged by DistributedDataParallel).

    >>> cfg = TrainConfig(output_dir="runs/demo", train_data=["pseudo.jsonl.gz"], mode="continual")  # doctest: +SKIP
    >>> history = train(cfg)                                                                         # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from nlgeval_training.boolqa import CURRICULA

MODES = ("continual", "multitask")


def default_stages() -> list[list[str]]:
    """Stage k trains the k-th dimension of both curricula (summarization and dialogue side by side)."""
    s, d = CURRICULA["summarization"], CURRICULA["dialogue"]
    return [[f"summarization/{a}", f"dialogue/{b}"] for a, b in zip(s, d)]


@dataclass
class TrainConfig:
    """Everything a training run depends on; saved as ``config.json`` in the output folder."""

    output_dir: str
    train_data: list[str]
    eval_data: list[str] = field(default_factory=list)  # empty: hold out ``eval_fraction`` of groups
    eval_fraction: float = 0.1
    encoder: str = "minilm"  # "minilm" (the packaged all-MiniLM-L6-v2) or a folder
    init_checkpoint: str | None = None  # start from an earlier checkpoint (e.g. the intermediate stage)
    encoder_layers: int | None = None  # keep only the encoder's first N layers (a cheaper model; None: all)
    pooling: str = "mean"  # "mean" or "claim" (the claim segment's mean beside the whole mean; model.py)
    mode: str = "continual"
    stages: list[list[str]] = field(default_factory=default_stages)
    replay: float = 0.2
    same_budget: bool = True  # multitask: as many examples as the continual plan
    examples_per_dimension: int | dict[str, int] | None = None  # one cap for all, or per task/dimension
    epochs: float = 1.0
    batch_size: int = 16
    max_length: int = 192
    lr_encoder: float = 3e-5
    lr_head: float = 1e-3
    weight_decay: float = 0.01
    warmup_fraction: float = 0.05
    freeze_embeddings: bool = False
    freeze_layers: int = 0
    eval_per_dimension: int = 200
    checkpoint_every: int = 200
    eval_every: int = 0  # also evaluate every N steps inside a stage (0: stage ends only)
    max_minutes: float | None = None  # wall-clock guard: end the current stage early, then stop
    stop_after_steps: int | None = None  # stop (checkpointed, resumable) after this many global steps
    log_every: int = 20
    seed: int = 0
    threads: int | None = None
    log_file: str | None = None
    progress: bool = True

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        if not self.train_data:
            raise ValueError("train_data is empty: pass one or more Boolean-QA record files")
        if not 0 <= self.replay <= 1:
            raise ValueError(f"replay must be a fraction in [0, 1], got {self.replay}")
        if self.batch_size < 1 or self.max_length < 8:
            raise ValueError("batch_size must be >= 1 and max_length >= 8")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TrainConfig":
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown training option(s) {unknown}; known: {sorted(known)}")
        return cls(**data)


# -- data plan --------------------------------------------------------------------------------------------
def _key(rec: dict) -> str:
    return f"{rec['task']}/{rec['dimension']}"


def load_split(config: TrainConfig) -> tuple[list[dict], list[dict]]:
    """(train, held-out) records; held-out groups never appear in training."""
    from nlgeval_training.pseudo.build import read_records
    from nlgeval_training.pseudo.common import split_records

    records = [r for path in config.train_data for r in read_records(path)]
    if config.eval_data:
        held = [r for path in config.eval_data for r in read_records(path)]
        held_groups = {r["group"] for r in held}
        return [r for r in records if r["group"] not in held_groups], held
    return split_records(records, config.eval_fraction)


def plan_stages(config: TrainConfig, train: list[dict]) -> list[tuple[str, list[dict]]]:
    """The examples of every stage, in a fixed order given the seed: ``[(stage name, records), ...]``."""
    rng = random.Random(config.seed)
    pools: dict[str, list[dict]] = defaultdict(list)
    for rec in train:
        pools[_key(rec)].append(rec)
    missing = [d for stage in config.stages for d in stage if d not in pools]
    if missing:
        raise ValueError(f"no training records for {missing}; the data has {sorted(pools)}")
    for key in sorted(pools):
        rng.shuffle(pools[key])
        cap = config.examples_per_dimension
        if isinstance(cap, dict):
            cap = cap.get(key)
        if cap:
            pools[key] = pools[key][:cap]

    def repeat(recs: list[dict], epochs: float, r: random.Random) -> list[dict]:
        whole, frac = int(epochs), epochs - int(epochs)
        out = []
        for _ in range(whole):
            out.extend(r.sample(recs, len(recs)))
        out.extend(r.sample(recs, int(round(frac * len(recs)))))
        return out

    continual: list[tuple[str, list[dict]]] = []
    seen: list[str] = []
    for k, stage in enumerate(config.stages):
        r = random.Random(config.seed * 1000 + k)
        new = [rec for d in stage for rec in pools[d]]
        replayed = [rec for d in seen for rec in r.sample(pools[d], int(round(config.replay * len(pools[d]))))]
        continual.append(("+".join(stage), repeat(new + replayed, config.epochs, r)))
        seen.extend(stage)
    if config.mode == "continual":
        return continual
    everything = [rec for stage in config.stages for d in stage for rec in pools[d]]
    r = random.Random(config.seed * 1000 + 999)
    if config.same_budget:
        total = sum(len(recs) for _, recs in continual)
        return [("multitask", repeat(everything, total / len(everything), r))]
    return [("multitask", repeat(everything, config.epochs, r))]


def length_batches(lengths: list[int], batch_size: int, seed: int, window: int = 50) -> list[list[int]]:
    """Batches of indices with similar lengths: sort inside windows of ``window`` batches, shuffle batches."""
    rng = random.Random(seed)
    order = list(range(len(lengths)))
    rng.shuffle(order)
    batches: list[list[int]] = []
    span = batch_size * window
    for start in range(0, len(order), span):
        chunk = sorted(order[start : start + span], key=lambda i: lengths[i])
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    rng.shuffle(batches)
    return batches


# -- runtime helpers --------------------------------------------------------------------------------------
class RunLog:
    """Writes JSON lines to ``log_file`` (and short lines to stderr when there is no progress bar)."""

    def __init__(self, path: str | None, enabled: bool):
        self.path = Path(path) if path and enabled else None
        self.enabled = enabled
        if self.path:
            self.path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, event: str, **data: Any) -> None:
        if not self.enabled:
            return
        line = json.dumps({"time": time.strftime("%H:%M:%S"), "event": event, **data})
        if self.path:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")


def _pad(batch_ids: list[list[int]], pad_id: int):
    import torch

    width = max(len(x) for x in batch_ids)
    ids = torch.full((len(batch_ids), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch_ids), width), dtype=torch.long)
    for i, x in enumerate(batch_ids):
        ids[i, : len(x)] = torch.tensor(x, dtype=torch.long)
        mask[i, : len(x)] = 1
    return ids, mask


def predict(model, token_ids: list[list[int]], pad_id: int = 0, batch_size: int = 32) -> list[float]:
    """P(Yes) of pre-tokenised inputs, in input order (length-sorted batches for speed)."""
    import torch

    order = sorted(range(len(token_ids)), key=lambda i: len(token_ids[i]))
    out = [0.0] * len(token_ids)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            ids, mask = _pad([token_ids[i] for i in idx], pad_id)
            for i, p in zip(idx, model.p_yes(ids, mask).tolist()):
                out[i] = p
    model.train(was_training)
    return out


def eval_subset(held: list[dict], per_dimension: int, seed: int) -> list[dict]:
    """A fixed, balanced subset of the held-out records: ``per_dimension`` per dimension (half each label)."""
    from nlgeval_training.pseudo.common import balanced_subset

    return balanced_subset(held, per_dimension, random.Random(seed + 7), _key)


def evaluate(model, tokenizer, records: list[dict], separator_token: str, pad_id: int = 0) -> dict:
    """Accuracy and AUC per dimension of ``model`` on ``records``."""
    from nlgeval_training.encoding import encode
    from nlgeval_training.metrics import per_dimension

    ids = encode(tokenizer, [r["input"] for r in records], separator_token)
    return per_dimension(records, predict(model, ids, pad_id))


def _save_checkpoint(folder: Path, model, optimizer, scheduler, state: dict, tokenizer_path: Path) -> None:
    """Write to a temporary folder and rename, so an interrupted save never leaves a half checkpoint."""
    import torch

    tmp = folder.with_name(folder.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    model.save(tmp)
    shutil.copy(tokenizer_path, tmp / "tokenizer.json")
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}, tmp / "optimizer.pt")
    (tmp / "state.json").write_text(json.dumps(state, indent=1))
    if folder.exists():
        shutil.rmtree(folder)
    tmp.rename(folder)


def _freeze(model, config: TrainConfig) -> None:
    """Freeze the embeddings and the first layers the configuration asks to keep."""
    if config.freeze_embeddings:
        model.encoder.embeddings.requires_grad_(False)
    if config.freeze_layers:
        for layer in model.encoder.encoder.layer[: config.freeze_layers]:
            layer.requires_grad_(False)


def keep_first_layers(model, n: int) -> None:
    """Drop the encoder's top layers, keeping the first ``n``: fine-tuned, such a model keeps most of the full
    one's accuracy at a fraction of its cost (Sajjad et al., 2023, "On the effect of dropping layers of
    pre-trained transformer models": top-layer dropping was the best of the strategies compared)."""
    layers = model.encoder.encoder.layer
    if not 1 <= n <= len(layers):
        raise ValueError(f"encoder_layers={n}: the encoder has {len(layers)} layers; keep between 1 and {len(layers)}")
    model.encoder.encoder.layer = layers[:n]
    model.encoder.config.num_hidden_layers = n


def _build_model(config: TrainConfig):
    from nlgeval_training.model import EncoderClassifier, minilm_path

    if config.init_checkpoint:
        model = EncoderClassifier.load(config.init_checkpoint)
        tok_path = Path(config.init_checkpoint) / "tokenizer.json"
    else:
        enc = minilm_path() if config.encoder == "minilm" else Path(config.encoder)
        tok_path = enc / "tokenizer.json"
    if not tok_path.is_file():
        raise FileNotFoundError(f"{tok_path} is missing: the encoder folder must hold a tokenizers tokenizer.json")
    if not config.init_checkpoint:
        # the claim pooling finds the claim segment by the tokenizer's separator
        separator_id = None
        if config.pooling == "claim":
            from nlgeval_training.encoding import load_tokenizer
            from nlgeval_training.model import SEPARATOR_TOKEN

            separator_id = load_tokenizer(tok_path, config.max_length).token_to_id(SEPARATOR_TOKEN)
            if separator_id is None:
                raise ValueError(f'pooling="claim": the tokenizer {tok_path} has no {SEPARATOR_TOKEN} token')
        model = EncoderClassifier.from_pretrained_encoder(enc, config.pooling, separator_id)
        if config.encoder_layers:
            keep_first_layers(model, config.encoder_layers)
    _freeze(model, config)
    return model, tok_path


def _resume_point(config: TrainConfig, last: Path, model, resume: bool) -> tuple[Any, dict, bool]:
    """``(model, state, resumed)``: the model and position saved in ``last`` by an interrupted run of the
    same configuration, else ``model`` at the start."""
    state = {"stage": 0, "step_in_stage": 0, "global_step": 0, "history": []}
    if not (resume and (last / "state.json").is_file()):
        return model, state, False
    from nlgeval_training.model import EncoderClassifier

    saved = json.loads((last / "state.json").read_text())
    if saved.get("config_hash") != _config_hash(config):
        raise ValueError(
            f"{last} was written by a different configuration; use a new output_dir or pass resume=False to start over"
        )
    model = EncoderClassifier.load(last)
    _freeze(model, config)
    return model, saved, True


# -- the loop ---------------------------------------------------------------------------------------------
@dataclass
class _Run:
    """What the steps of one training run share (made by :func:`_start_run`)."""

    config: TrainConfig
    world: int
    rank: int
    out: Path
    log: RunLog
    started: float
    train_recs: list[dict]
    stages: list[tuple[str, list[dict]]]
    eval_recs: list[dict]
    model: Any
    ddp_model: Any  # the model, or its DistributedDataParallel wrapper under torchrun
    tok_path: Path
    tokenizer: Any
    pad_id: int
    state: dict  # stage, step_in_stage, global_step, history: what a checkpoint saves
    resumed: bool  # true until the first stage after a resume has ended

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def last(self) -> Path:
        return self.out / "last"

    def barrier(self) -> None:
        if self.world > 1:
            import torch.distributed as dist

            dist.barrier()

    def checkpoint(self, stage: int, step_in_stage: int, optimizer, scheduler) -> None:
        """Save the model, the optimizer and the position reached in ``last/``."""
        self.state.update(stage=stage, step_in_stage=step_in_stage, config_hash=_config_hash(self.config))
        _save_checkpoint(self.last, self.model, optimizer, scheduler, self.state, self.tok_path)

    def evaluate(self) -> dict:
        from nlgeval_training.model import SEPARATOR_TOKEN

        return evaluate(self.model, self.tokenizer, self.eval_recs, SEPARATOR_TOKEN, self.pad_id)


@dataclass
class _Stage:
    """One stage of the plan, ready to train: its batches, optimizer and schedule, and where to start."""

    k: int
    name: str
    recs: list[dict]
    ids: list[list[int]]
    targets: list[int]
    batches: list[list[int]]  # this process's share of the stage's batches
    optimizer: Any
    scheduler: Any
    total: int
    start_step: int
    progress: Any = None


def train(config: TrainConfig, resume: bool = True) -> list[dict]:
    """Run (or resume) the stages of ``config``; returns the evaluation history (one entry per stage).

    Outputs in ``config.output_dir``: ``config.json``, ``last/`` (the latest checkpoint, with optimizer and
    position), ``final/`` (the model after the last stage), ``history.json`` (held-out metrics per stage).
    """
    run = _start_run(config, resume)
    for k in range(run.state["stage"], len(run.stages)):
        outcome = _train_stage(run, k)
        if outcome == "stopped":
            return run.state["history"]
        if outcome == "deadline":
            break
    if run.main:
        _save_final(run)
    run.barrier()
    return run.state["history"]


def _start_run(config: TrainConfig, resume: bool) -> _Run:
    """Processes, seeds, data, model and the position to start from; writes ``config.json``."""
    import torch
    import torch.distributed as dist

    from nlgeval_training.encoding import load_tokenizer

    if config.threads:
        torch.set_num_threads(config.threads)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    main = rank == 0
    out = Path(config.output_dir)
    log = RunLog(config.log_file or str(out / "train.log.jsonl"), enabled=main)
    random.seed(config.seed)
    torch.manual_seed(config.seed)
    started = time.time()

    train_recs, held = load_split(config)
    stages = plan_stages(config, train_recs)
    eval_recs = eval_subset(held, config.eval_per_dimension, config.seed)
    model, tok_path = _build_model(config)
    tokenizer = load_tokenizer(tok_path, config.max_length)
    pad_id = tokenizer.token_to_id("[PAD]") or 0
    model, state, resumed = _resume_point(config, out / "last", model, resume)
    if main:
        out.mkdir(parents=True, exist_ok=True)
        (out / "config.json").write_text(json.dumps(asdict(config), indent=1))
        log.write(
            "start",
            resumed=resumed,
            world_size=world,
            stages=[(n, len(r)) for n, r in stages],
            train_records=len(train_recs),
            eval_records=len(eval_recs),
            config=asdict(config),
        )

    ddp_model = model
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel

        ddp_model = DistributedDataParallel(model)
    return _Run(
        config,
        world,
        rank,
        out,
        log,
        started,
        train_recs,
        stages,
        eval_recs,
        model,
        ddp_model,
        tok_path,
        tokenizer,
        pad_id,
        state,
        resumed,
    )


def _prepare_stage(run: _Run, k: int) -> _Stage:
    """Stage ``k``'s inputs, this process's batches, a fresh optimizer and schedule, restored on resume."""
    import torch

    from nlgeval_training.encoding import encode
    from nlgeval_training.model import SEPARATOR_TOKEN

    config, model, world = run.config, run.model, run.world
    name, recs = run.stages[k]
    ids = encode(run.tokenizer, [r["input"] for r in recs], SEPARATOR_TOKEN)
    targets = [1 - int(r["label"]) for r in recs]  # class 0 = "Yes", class 1 = "No"
    batches = length_batches([len(x) for x in ids], config.batch_size, config.seed * 7919 + k)
    batches = batches[: len(batches) - len(batches) % world] if world > 1 else batches
    my_batches = batches[run.rank :: world]
    enc_params = [p for p in model.encoder.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(
        [{"params": enc_params, "lr": config.lr_encoder}, {"params": model.head.parameters(), "lr": config.lr_head}],
        weight_decay=config.weight_decay,
    )
    total = max(1, len(my_batches))
    warmup = max(1, int(config.warmup_fraction * total))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / max(1, total - warmup)))
    )
    start_step = run.state["step_in_stage"] if k == run.state["stage"] else 0
    if run.resumed and start_step > 0 and (run.last / "optimizer.pt").is_file():
        saved_opt = torch.load(run.last / "optimizer.pt", map_location="cpu", weights_only=False)
        optimizer.load_state_dict(saved_opt["optimizer"])
        scheduler.load_state_dict(saved_opt["scheduler"])
    progress = None
    if run.main and config.progress:
        from tqdm import tqdm

        progress = tqdm(
            total=total,
            initial=start_step,
            desc=f"stage {k + 1}/{len(run.stages)} {name}",
            file=sys.stderr,
            dynamic_ncols=True,
        )
    return _Stage(k, name, recs, ids, targets, my_batches, optimizer, scheduler, total, start_step, progress)


def _train_stage(run: _Run, k: int) -> str:
    """Train stage ``k`` from where the run stands. Returns ``"done"``, ``"deadline"`` (``max_minutes``
    ran out: the stage ends early and the run stops) or ``"stopped"`` (``stop_after_steps``: checkpointed
    as an interruption would leave it)."""
    stage = _prepare_stage(run, k)
    run.model.train()
    outcome, steps_run = _run_steps(run, stage)
    if outcome == "stopped":
        return outcome
    if stage.progress:
        stage.progress.close()
    if run.main:
        _end_stage(run, stage, steps_run, stopped_early=outcome == "deadline")
    run.barrier()
    run.resumed = False
    return outcome


def _train_step(run: _Run, stage: _Stage, step: int) -> tuple[float, int]:
    """One optimizer step on batch ``step``; returns the batch's mean loss and its size."""
    import torch

    idx = stage.batches[step]
    x, mask = _pad([stage.ids[i] for i in idx], run.pad_id)
    y = torch.tensor([stage.targets[i] for i in idx], dtype=torch.long)
    loss = torch.nn.functional.cross_entropy(run.ddp_model(x, mask), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(run.model.parameters(), 1.0)
    stage.optimizer.step()
    stage.scheduler.step()
    stage.optimizer.zero_grad(set_to_none=True)
    return float(loss.detach()), len(idx)


def _run_steps(run: _Run, stage: _Stage) -> tuple[str, int]:
    """The steps of a stage, with logs, evaluations and checkpoints on the way; ``(outcome, steps run)``."""
    config, state, log, main = run.config, run.state, run.log, run.main
    name, total = stage.name, stage.total
    t0, loss_sum, n_sum = time.time(), 0.0, 0
    step_count = 0
    for step in range(stage.start_step, total):
        if config.max_minutes is not None and time.time() - run.started > 60 * config.max_minutes:
            log.write("deadline", stage=name, step=step, of=total, max_minutes=config.max_minutes)
            return "deadline", step_count
        loss, n = _train_step(run, stage, step)
        state["global_step"] += 1
        step_count += 1
        loss_sum += loss * n
        n_sum += n
        if stage.progress:
            stage.progress.update(1)
            stage.progress.set_postfix(loss=f"{loss_sum / n_sum:.3f}")
        if main and (step + 1) % config.log_every == 0:
            log.write(
                "train",
                stage=name,
                step=step + 1,
                of=total,
                global_step=state["global_step"],
                loss=round(loss_sum / n_sum, 4),
                examples_per_s=round(n_sum / (time.time() - t0), 2),
            )
            t0, loss_sum, n_sum = time.time(), 0.0, 0
        if main and config.eval_every and (step + 1) % config.eval_every == 0 and step + 1 < total:
            log.write(
                "eval",
                stage=stage.k + 1,
                name=name,
                step=step + 1,
                global_step=state["global_step"],
                metrics=run.evaluate(),
            )
        if config.stop_after_steps is not None and state["global_step"] >= config.stop_after_steps and step + 1 < total:
            # Behaves like an interruption right after a checkpoint: the next run resumes here.
            if main:
                run.checkpoint(stage.k, step + 1, stage.optimizer, stage.scheduler)
                log.write("stopped", global_step=state["global_step"])
            run.barrier()
            return "stopped", step_count
        if config.checkpoint_every and (step + 1) % config.checkpoint_every == 0 and step + 1 < total:
            if main:
                run.checkpoint(stage.k, step + 1, stage.optimizer, stage.scheduler)
            run.barrier()
    return "done", step_count


def _end_stage(run: _Run, stage: _Stage, steps_run: int, stopped_early: bool) -> None:
    """Held-out metrics of the stage into the history, and the checkpoint at the start of the next stage."""
    state = run.state
    entry = {
        "stage": stage.k + 1,
        "name": stage.name,
        "examples": len(stage.recs),
        "steps": stage.total,
        "steps_run": steps_run,
        "global_step": state["global_step"],
        "metrics": run.evaluate(),
        "stopped_early": stopped_early,
    }
    state["history"].append(entry)
    run.log.write("eval", **entry)
    run.checkpoint(stage.k + 1, 0, stage.optimizer, stage.scheduler)
    (run.out / "history.json").write_text(json.dumps(state["history"], indent=1))


def _save_final(run: _Run) -> None:
    """The model after the last stage, with its tokenizer and how it was trained, as ``final/``."""
    out, state = run.out, run.state
    final = out / "final"
    tmp = out / "final.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    run.model.save(tmp)
    shutil.copy(run.tok_path, tmp / "tokenizer.json")
    (tmp / "training.json").write_text(
        json.dumps(
            {
                "config": asdict(run.config),
                "history": state["history"],
                "global_step": state["global_step"],
                "train_records": len(run.train_recs),
                "stages": [(n, len(r)) for n, r in run.stages],
            },
            indent=1,
        )
    )
    if final.exists():
        shutil.rmtree(final)
    tmp.rename(final)
    run.log.write("done", global_step=state["global_step"])


def _config_hash(config: TrainConfig) -> str:
    import hashlib

    keep = {
        k: v
        for k, v in asdict(config).items()
        if k
        not in (
            "progress",
            "log_file",
            "threads",
            "checkpoint_every",
            "log_every",
            "max_minutes",
            "stop_after_steps",
            "eval_every",
        )
    }
    if keep.get("pooling") == "mean":
        del keep["pooling"]  # the default: runs written before the option existed still resume
    return hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:16]
