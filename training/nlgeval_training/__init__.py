"""Build Boolean-QA evaluator checkpoints the UniEval way (Zhong et al., 2022).

Pseudo data (:mod:`nlgeval_training.pseudo`), intermediate tasks (:mod:`nlgeval_training.intermediate`),
continual training with replay (:mod:`nlgeval_training.trainer`), ONNX export and checkpoint cards.
Heavy modules (torch, transformers) are imported inside the functions that need them.

    >>> from nlgeval_training.boolqa import boolqa_input
    >>> boolqa_input("summarization", "fluency", output="The cat sat.")
    'question: Is this a fluent paragraph? </s> paragraph: The cat sat.'
"""

__version__ = "0.1.0"
