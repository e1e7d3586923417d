"""Errors of the runtime. Every message names the input that was wrong and what to do about it."""

from __future__ import annotations


class NLGEvalRuntimeError(Exception):
    """Base class of the runtime's errors."""


class ModelNotFoundError(NLGEvalRuntimeError):
    """A model could not be resolved to a folder (missing path, offline with nothing cached, ...)."""


class ModelFormatError(NLGEvalRuntimeError):
    """A model folder exists but does not follow the model-folder contract (docs/model-folder.md)."""


class ModelIntegrityError(NLGEvalRuntimeError):
    """A model file's sha256 differs from the one recorded in nlgeval.json (tampered or truncated)."""


class ProviderError(NLGEvalRuntimeError):
    """The requested device or precision cannot be served by this installation."""


class ScoringError(NLGEvalRuntimeError):
    """Scoring produced no usable number (e.g. non-finite outputs of an fp16 graph)."""
