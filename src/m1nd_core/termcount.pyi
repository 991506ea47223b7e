"""Term counting per document (the body field of the lexical index)."""

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

def count_terms(
    texts: Sequence[str], skip: npt.NDArray[np.uint8], vocab: Sequence[str]
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32], npt.NDArray[np.int32], list[str]]:
    """Per document not skipped, its distinct ``str.split()`` tokens in first-seen order: (term ids, counts,
    documents, new terms). Ids below ``len(vocab)`` are vocabulary positions; a new term takes the next id on first
    sight (``new terms`` in id order)."""
