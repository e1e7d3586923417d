"""llama.cpp (llama-cpp-python) without the CPU weight-repacking crash, and a judge server built on it.

llama.cpp repacks quantised weights into "extra buffer types" for the CPU's wide vector instructions. With
llama-cpp-python 0.3.x some models (Gemma 3 270M in Q4_K_M among them) crash in decoding on CPUs with
AVX-512/AMX when it does. Turning the repacking off (the model parameter ``use_extra_bufts = False``) avoids
the crash, at some speed on those CPUs. ``llama_cpp.Llama`` builds its model parameters from
``llama_model_default_params()`` and exposes no argument for it, and neither do the settings of
``python -m llama_cpp.server``; so :func:`no_weight_repacking` changes the defaults for the code it wraps::

    with no_weight_repacking():
        llm = llama_cpp.Llama(model_path=path, n_ctx=512)

and ``python -m pytest_nlgeval.llamacpp ARGS`` is ``python -m llama_cpp.server ARGS`` with the repacking off:
an OpenAI-compatible server for ``assert_judged`` (``--nlgeval-judge-lm openai/ALIAS
--nlgeval-judge-api-base http://127.0.0.1:PORT/v1``). llama.cpp comes with ``pip install "pytest-nlgeval[llm]"``,
the server with ``pip install "llama-cpp-python[server]"``. (The trajectory checks' GGUF LM,
:mod:`pytest_nlgeval.trajectory.gguf_lm`, turns the repacking off through llama.cpp's C API itself.)
"""

from __future__ import annotations

import contextlib
import sys
from typing import Iterator

__all__ = ["no_weight_repacking", "serve"]


@contextlib.contextmanager
def no_weight_repacking() -> Iterator[None]:
    """Inside the block, llama.cpp models are loaded with ``use_extra_bufts = False`` (no CPU repacking)."""
    from pytest_nlgeval.extras import require

    low = require("llama_cpp.llama_cpp", "a llama.cpp model")
    original = low.llama_model_default_params

    def defaults():
        params = original()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False
        return params

    low.llama_model_default_params = defaults
    try:
        yield
    finally:
        low.llama_model_default_params = original


def serve(argv: list[str] | None = None) -> None:
    """Run llama-cpp-python's OpenAI-compatible server (its own arguments) with the repacking off."""
    if argv is not None:
        sys.argv = [sys.argv[0], *argv]
    with no_weight_repacking():
        try:
            from llama_cpp.server.__main__ import main
        except ImportError as exc:
            from pytest_nlgeval.errors import UsageError

            raise UsageError(
                f"the llama.cpp server needs llama-cpp-python's server extra ({exc}): "
                "pip install \"llama-cpp-python[server]\""
            ) from None
        main()


if __name__ == "__main__":  # pragma: no cover - run as a server process by the tests
    serve()
