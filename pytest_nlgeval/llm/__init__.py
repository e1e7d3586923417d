"""How this project talks to an LLM server: an OpenAI-compatible client on the standard library.

:class:`~pytest_nlgeval.llm.client.OpenAIClient` sends chat and completion requests to a local or hosted
OpenAI-compatible server (llama.cpp's, vLLM, Ollama's ``/v1``) with nothing but :mod:`urllib`: a criterion
judge pointed at such a server does not import DSPy or LiteLLM (seconds of imports on the first check).
Its failures are the named :class:`~pytest_nlgeval.llm.cache.JudgeServerError` subclasses.
"""

from pytest_nlgeval.llm.client import OpenAIClient

__all__ = ["OpenAIClient"]
