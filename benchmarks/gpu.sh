#!/usr/bin/env bash
# One prepared run on a machine with an NVIDIA GPU, at most 8 minutes: install the GPU build of the
# runtime, then `benchmarks/gpu.py` (PyTorch reference vs ONNX Runtime fp16 mixed precision on a
# random-weight t5-v1_1-large, batch 8 and the best batch; ratio, max |diff|, non-finite scores, and the
# provider each session really got).
#
#   bash benchmarks/gpu.sh                 # from the repository root
#   ARCH=base INPUTS=32 bash benchmarks/gpu.sh
#
# The environment lives in .venv-gpu (kept between runs, so a second run skips the install). onnxruntime-gpu
# and the CPU wheel onnxruntime share a module name: both are removed after the editable installs and the
# GPU build is installed again on its own.
set -euo pipefail
cd "$(dirname "$0")/.."
START=$(date +%s)
BUDGET=${BUDGET:-480}        # seconds for the whole script
ARCH=${ARCH:-large}
INPUTS=${INPUTS:-64}
VENV=${VENV:-.venv-gpu}
PYTHON=${PYTHON:-python3}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

left() { echo $(( BUDGET - ($(date +%s) - START) )); }

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || echo "nvidia-smi: no GPU visible"

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
PY="$VENV/bin/python"
if ! "$PY" -c "import torch, onnxruntime, nlgeval_runtime, nlgeval_training, transformers; assert torch.cuda.is_available(); assert 'CUDAExecutionProvider' in onnxruntime.get_available_providers()" 2>/dev/null; then
    echo "installing (budget left $(left)s) ..."
    timeout "$(( $(left) > 300 ? $(left) - 240 : 60 ))" bash -c "
        set -e
        '$PY' -m pip install --quiet --upgrade pip
        '$PY' -m pip install --quiet torch               # the default Linux wheel is the CUDA build
        '$PY' -m pip install --quiet -e './runtime[gpu]' -e ./training transformers onnx onnxscript
        # both wheels install the module onnxruntime: remove both, then put the GPU build back alone
        '$PY' -m pip uninstall --quiet -y onnxruntime onnxruntime-gpu
        '$PY' -m pip install --quiet --no-deps 'onnxruntime-gpu>=1.17'
    "
fi
"$PY" -c "import onnxruntime as o; print('onnxruntime', o.__version__, o.get_available_providers())"
echo "measuring (budget left $(left)s) ..."
timeout "$(( $(left) - 5 ))" "$PY" benchmarks/gpu.py --arch "$ARCH" --inputs "$INPUTS" "$@"
echo "total $(( $(date +%s) - START ))s"
