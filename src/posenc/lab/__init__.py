"""The lab: train tiny transformers on the CPU and measure what the book claims.

``python -m posenc.lab --help`` for the command line. In a notebook::

    from posenc import lab
    record = lab.run(lab.RunConfig.for_task("lookup", scheme="rope", seed=0))
"""

from .data import CharCorpus, char_corpus, corpus_hash, lookup_batch, passkey_batch, passkey_vocab, stdlib_docstrings
from .model import ROTARY_SCHEMES, SCHEMES, ModelConfig, TinyTransformer
from .provenance import code_version
from .results import (
    bootstrap_interval,
    device_kind,
    load_checkpoint,
    load_results,
    mean_interval,
    merge_runs,
    mixing_problems,
    older_protocol,
    paired_difference,
    run_identity,
    save_checkpoint,
    seed_values,
    seeds_agreeing,
    seeds_phrase,
    summarise,
    t_quantile,
    wilson_interval,
    write_file,
)
from .train import (
    EXTENSIONS,
    PASSKEY_DEPTHS,
    TASKS,
    RunConfig,
    build_model,
    evaluate,
    extension_settings,
    learned_position_table,
    per_position,
    provenance,
    run,
    search_longrope_factors,
    strip_model,
    train,
)

__all__ = [
    "SCHEMES",
    "TASKS",
    "EXTENSIONS",
    "ModelConfig",
    "TinyTransformer",
    "RunConfig",
    "build_model",
    "train",
    "evaluate",
    "per_position",
    "extension_settings",
    "learned_position_table",
    "run",
    "strip_model",
    "lookup_batch",
    "stdlib_docstrings",
    "CharCorpus",
    "char_corpus",
    "save_checkpoint",
    "load_checkpoint",
    "load_results",
    "summarise",
    "seed_values",
    "seeds_agreeing",
    "seeds_phrase",
    "t_quantile",
    "mean_interval",
    "passkey_batch",
    "passkey_vocab",
    "search_longrope_factors",
    "PASSKEY_DEPTHS",
    "ROTARY_SCHEMES",
    "corpus_hash",
    "code_version",
    "provenance",
    "bootstrap_interval",
    "wilson_interval",
    "paired_difference",
    "merge_runs",
    "mixing_problems",
    "run_identity",
    "device_kind",
    "older_protocol",
    "write_file",
]
