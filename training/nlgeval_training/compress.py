"""Smaller ONNX graphs without int8 activations: int8 embedding tables plus fp16-stored weights.

Dynamic int8 quantisation of the MatMuls (``quantize_int8``) also quantises activations at run time; on a
small encoder classifier that moved P(Yes) by up to 0.3 and flipped about one decision in ten. Storing the
dense weights in fp16 and casting them back to fp32 when the session is built keeps the arithmetic in fp32
(the only error is fp16 rounding of the weights), and quantising only the embedding tables (a ``Gather``,
per row) keeps the 30k-word table small. The result is about 40% of the fp32 size.

    >>> compress_graph("model.onnx", "model.int8.onnx")    # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path


def fp16_weight_storage(model, min_elements: int = 4096):
    """Replace every float32 initializer with at least ``min_elements`` values by an fp16 copy + ``Cast``."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    casts, keep = [], []
    for init in graph.initializer:
        if init.data_type == TensorProto.FLOAT and int(np.prod(init.dims)) >= min_elements:
            array = numpy_helper.to_array(init)
            stored = numpy_helper.from_array(array.astype(np.float16), name=init.name + "__fp16")
            keep.append(stored)
            casts.append(
                helper.make_node("Cast", [stored.name], [init.name], to=TensorProto.FLOAT, name=init.name + "__cast")
            )
        else:
            keep.append(init)
    del graph.initializer[:]
    graph.initializer.extend(keep)
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend(casts + nodes)
    onnx.checker.check_model(model)
    return model


def compress_graph(src: str | Path, dst: str | Path) -> None:
    """``src`` (fp32) -> ``dst``: per-row int8 embedding tables, other large weights stored in fp16."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    dst = Path(dst)
    tmp = dst.with_name(dst.name + ".gather.onnx")
    quantize_dynamic(str(src), str(tmp), weight_type=QuantType.QInt8, op_types_to_quantize=["Gather"], per_channel=True)
    model = fp16_weight_storage(onnx.load(str(tmp)))
    onnx.save_model(model, str(dst))
    tmp.unlink()
