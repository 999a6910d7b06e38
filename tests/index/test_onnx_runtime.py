"""The ONNX runtime: choosing it, the model directory's facts and prompts, the ONNX file cache,
and (marked `model`) the same vectors as torch without importing torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vaultmem.errors import ConfigError
from vaultmem.index.embedders import (
    EmbedderOptions,
    FakeEmbedder,
    PromptedEmbedder,
    SentenceTransformerEmbedder,
    make_embedder,
)
from vaultmem.index.model_files import read_model_files
from vaultmem.index.onnx_cache import MANIFEST, is_verified, model_key
from vaultmem.index.onnx_embedder import OnnxEmbedder
from vaultmem.index.onnx_export import GRAPH_NAME, WEIGHTS_NAME


def _options(tmp_path: Path, runtime: str = "auto", query: str = "",
             passage: str = "") -> EmbedderOptions:
    return EmbedderOptions(runtime=runtime, cache=tmp_path / "models", query_prompt=query,
                           passage_prompt=passage, threads=1, batch_size=4)


def _model_dir(tmp_path: Path, *, prompts: dict[str, str] | None = None,
               tokenizer: bool = True, pooling: str = "mean") -> Path:
    """A model directory's configuration files (no weights: nothing here loads it)."""
    model = tmp_path / "e5-like"
    (model / "1_Pooling").mkdir(parents=True)
    modules = [{"idx": 0, "name": "0", "path": "",
                "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling"}]
    (model / "modules.json").write_text(json.dumps(modules))
    (model / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 512}))
    (model / "1_Pooling" / "config.json").write_text(json.dumps(
        {"pooling_mode_mean_tokens": pooling == "mean", "pooling_mode_cls_token": pooling == "cls",
         "pooling_mode_max_tokens": pooling == "max"}))
    if prompts is not None:
        (model / "config_sentence_transformers.json").write_text(json.dumps({"prompts": prompts}))
    if tokenizer:
        (model / "tokenizer.json").write_text("{}")
    return model


def test_fake_embedder_with_prompts_embeds_the_prompted_texts(tmp_path: Path) -> None:
    embedder = make_embedder("fake:128", _options(tmp_path, query="query: ", passage="passage: "))
    plain = FakeEmbedder(128)
    assert isinstance(embedder, PromptedEmbedder)
    np.testing.assert_array_equal(embedder.embed_query("sourdough"),
                                  plain.embed_query("query: sourdough"))
    np.testing.assert_array_equal(embedder.embed(["starter feeding"]),
                                  plain.embed(["passage: starter feeding"]))
    assert not np.array_equal(embedder.embed_query("sourdough"), plain.embed_query("sourdough"))
    # the prompts change every vector, so they are part of the index's identity
    assert embedder.name != plain.name and "query: " in embedder.name
    assert make_embedder("fake:128", _options(tmp_path)).name == plain.name


def test_a_model_directory_brings_its_prompts_and_settings_override_them(
    tmp_path: Path,
) -> None:
    model = _model_dir(tmp_path, prompts={"query": "query: ", "passage": "passage: "})
    files = read_model_files(model)
    assert (files.query_prompt, files.passage_prompt) == ("query: ", "passage: ")
    assert files.max_tokens == 512 and files.pooling == "mean" and files.onnx_problem is None
    embedder = make_embedder(str(model), _options(tmp_path, runtime="torch"))
    assert isinstance(embedder, PromptedEmbedder)
    assert isinstance(embedder.inner, SentenceTransformerEmbedder)
    assert (embedder.query_prompt, embedder.passage_prompt) == ("query: ", "passage: ")
    assert not embedder.loaded  # nothing loaded to know all this
    chosen = make_embedder(str(model), _options(tmp_path, runtime="torch", query="search: "))
    assert isinstance(chosen, PromptedEmbedder) and chosen.query_prompt == "search: "
    assert chosen.passage_prompt == "passage: "
    document = _model_dir(tmp_path / "doc", prompts={"document": "doc: "})
    assert read_model_files(document).passage_prompt == "doc: "


def test_runtime_choice(tmp_path: Path) -> None:
    model = _model_dir(tmp_path)
    auto = make_embedder(str(model), _options(tmp_path))
    assert isinstance(auto, OnnxEmbedder) and auto.runtime == "onnx" and not auto.loaded
    assert auto.name == str(model.resolve())  # the same identity as the torch runtime's
    assert make_embedder(str(model), _options(tmp_path, runtime="torch")).name == auto.name
    default = make_embedder("default", _options(tmp_path, runtime="onnx"))
    assert isinstance(default, OnnxEmbedder)
    assert default.name == make_embedder("default").name  # an index built by torch is kept
    # no tokenizer.json, or a pooling numpy does not do: no ONNX form
    bare = _model_dir(tmp_path / "bare", tokenizer=False)
    assert isinstance(make_embedder(str(bare), _options(tmp_path)), SentenceTransformerEmbedder)
    with pytest.raises(ConfigError, match=r"tokenizer\.json"):
        make_embedder(str(bare), _options(tmp_path, runtime="onnx"))
    maxed = _model_dir(tmp_path / "max", pooling="max")
    with pytest.raises(ConfigError, match="pooling"):
        make_embedder(str(maxed), _options(tmp_path, runtime="onnx"))
    with pytest.raises(ConfigError, match="not a local model directory"):
        make_embedder("org/some-model", _options(tmp_path, runtime="onnx"))


def test_model_key_is_the_content_hash_and_follows_changes(tmp_path: Path) -> None:
    model = _model_dir(tmp_path)
    cache = tmp_path / "models"
    first = model_key(cache, model)
    assert model_key(cache, model) == first  # from the recorded stamp
    (model / "README.md").write_text("docs do not change the model")
    assert model_key(cache, model) == first
    (model / "tokenizer.json").write_text('{"changed": true}')
    second = model_key(cache, model)
    assert second != first
    tokenizer = model / "tokenizer.json"
    before = tokenizer.stat()
    tokenizer.write_text('{"changed": 1.00}')  # same size, and the mtime set back: ctime moves
    os.utime(tokenizer, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert model_key(cache, model) not in (first, second)
    copy = tmp_path / "copy"
    copy.mkdir()
    for file in model.rglob("*"):
        if file.is_file():
            target = copy / file.relative_to(model)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(file.read_bytes())
    assert model_key(cache, copy) == model_key(cache, model)  # by content, not by place


def _export_like(folder: Path, graph: bytes, weights: bytes) -> dict[str, object]:
    """The two files of an export and the manifest that publishes them."""
    import hashlib

    folder.mkdir(exist_ok=True)
    (folder / GRAPH_NAME).write_bytes(graph)
    (folder / WEIGHTS_NAME).write_bytes(weights)
    return {"format": 2, "files": {
        name: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
        for name, data in ((GRAPH_NAME, graph), (WEIGHTS_NAME, weights))}}


def test_onnx_files_must_match_their_manifest(tmp_path: Path) -> None:
    folder = tmp_path / "key"
    assert not is_verified(folder)
    manifest = _export_like(folder, b"not really a graph", b"nor weights, but bytes")
    assert not is_verified(folder)  # an export that did not finish has no manifest
    (folder / MANIFEST).write_text(json.dumps(manifest))
    assert is_verified(folder)
    (folder / WEIGHTS_NAME).write_bytes(b"nor weights, but bytes!"[:-2] + b"!")
    assert not is_verified(folder)  # same size, other bytes
    (folder / WEIGHTS_NAME).write_bytes(b"nor weights, but bytes")
    assert is_verified(folder)
    (folder / GRAPH_NAME).write_bytes(b"not really a graph?")
    assert not is_verified(folder)
    (folder / GRAPH_NAME).write_bytes(b"not really a graph")
    (folder / WEIGHTS_NAME).unlink()
    assert not is_verified(folder)
    (folder / MANIFEST).write_text("{broken")
    assert not is_verified(folder)


def test_the_one_file_layout_before_is_exported_again(tmp_path: Path) -> None:
    import hashlib

    folder = tmp_path / "key"
    folder.mkdir()
    data = b"a graph with its weights inside"
    (folder / GRAPH_NAME).write_bytes(data)
    (folder / MANIFEST).write_text(json.dumps(  # format 1: no format key, one file
        {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}))
    assert not is_verified(folder)
    manifest = _export_like(folder, data, b"weights")
    for broken in ({**manifest, "format": 3}, {**manifest, "files": {GRAPH_NAME: {}}},
                   {**manifest, "files": None}, [manifest]):
        (folder / MANIFEST).write_text(json.dumps(broken))
        assert not is_verified(folder)


def test_unchanged_files_are_hashed_once_and_any_write_is_seen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vaultmem.index import onnx_cache

    folder = tmp_path / "key"
    data = b"model bytes " * 1000
    manifest = _export_like(folder, b"graph", data)
    (folder / MANIFEST).write_text(json.dumps(manifest))
    weights = folder / WEIGHTS_NAME
    hashed: list[str] = []
    real = onnx_cache._sha256_of
    monkeypatch.setattr(onnx_cache, "_sha256_of",
                        lambda path: hashed.append(path.name) or real(path))
    assert is_verified(folder) and is_verified(folder) and is_verified(folder)
    assert hashed == [GRAPH_NAME, WEIGHTS_NAME]  # later loads found the stats recorded
    before = weights.stat()
    with weights.open("r+b") as handle:  # same size, and the mtime set back: ctime still moves
        handle.seek(100)
        handle.write(b"!")
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert not is_verified(folder)
    weights.write_bytes(data)  # the right bytes again: hashed, and recorded anew
    assert is_verified(folder) and is_verified(folder)
    assert hashed.count(WEIGHTS_NAME) == 3 and hashed.count(GRAPH_NAME) == 1
    manifest["files"][WEIGHTS_NAME]["sha256"] = "0" * 64  # type: ignore[index]
    (folder / MANIFEST).write_text(json.dumps(manifest))
    assert not is_verified(folder)  # a new manifest is checked against the bytes


def test_large_tensors_move_to_the_weights_file_at_aligned_offsets(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    from vaultmem.index.onnx_export import WEIGHTS_ALIGN, move_weights_out

    rng = np.random.default_rng(7)
    table = rng.standard_normal((300, 64)).astype(np.float32)  # 75 KiB: moved
    scale = rng.standard_normal((64, 64)).astype(np.float32)  # 16 KiB: kept inline
    small = rng.standard_normal(64).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["rows"]),
         helper.make_node("MatMul", ["rows", "scale"], ["scaled"]),
         helper.make_node("Add", ["scaled", "small"], ["out"])],
        "g", [helper.make_tensor_value_info("ids", TensorProto.INT64, [None])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [None, 64])],
        [numpy_helper.from_array(table, "table"), numpy_helper.from_array(scale, "scale"),
         numpy_helper.from_array(small, "small")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "m.onnx"
    onnx.save_model(model, str(path))
    ids = np.array([0, 5, 299], dtype=np.int64)

    def run() -> np.ndarray:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        out: np.ndarray = session.run(None, {"ids": ids})[0]
        return out

    before = run()
    assert move_weights_out(path, "w.bin") == 1
    stored = {t.name: t for t in onnx.load(str(path), load_external_data=False).graph.initializer}
    assert stored["table"].data_location == TensorProto.EXTERNAL
    assert stored["scale"].data_location == TensorProto.DEFAULT
    offsets = {e.key: int(e.value) for e in stored["table"].external_data
               if e.key in ("offset", "length")}
    assert offsets["offset"] % WEIGHTS_ALIGN == 0 and offsets["length"] == table.nbytes
    assert (tmp_path / "w.bin").stat().st_size == table.nbytes
    np.testing.assert_array_equal(run(), before)  # the same outputs, bit for bit


# ---- the real model ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.mark.model
@pytest.mark.timeout(600)
def test_onnx_gives_torchs_vectors_and_rebuilds_a_corrupt_file(model_cache: Path) -> None:
    options = EmbedderOptions(runtime="onnx", cache=model_cache, query_prompt="",
                              passage_prompt="", threads=1, batch_size=3)
    onnx = make_embedder("default", options)
    torch_runtime = make_embedder("default")
    texts = ["the cat sat on the mat", "a kitten resting on a rug", "",
             "quarterly tax filing deadline " * 80, "Sauerteig füttern 🍞", "x"]
    a, b = onnx.embed(texts), torch_runtime.embed(texts)
    assert a.shape == b.shape == (6, 384) and a.dtype == np.float32
    assert float((a * b).sum(1).min()) > 0.99999
    query = "how do I feed a sourdough starter"
    assert float(onnx.embed_query(query) @ torch_runtime.embed_query(query)) > 0.99999
    (weights,) = model_cache.glob(f"*/{WEIGHTS_NAME}")
    assert (weights.parent / GRAPH_NAME).stat().st_size < 2**20  # the weights are beside it
    import onnx as onnx_files

    graph = onnx_files.load(str(weights.parent / GRAPH_NAME), load_external_data=False)
    assert "IsNaN" not in {n.op_type for n in graph.graph.node}  # revision 2: no NaN guards
    with weights.open("r+b") as handle:
        handle.seek(4096)
        handle.write(b"\xff" * 16)
    again = make_embedder("default", options)
    np.testing.assert_allclose(again.embed(texts[:2]), a[:2], atol=1e-5)  # rebuilt, verified
    assert is_verified(weights.parent)


@pytest.mark.model
@pytest.mark.timeout(600)
def test_the_onnx_runtime_imports_neither_torch_nor_sentence_transformers(
    model_cache: Path,
) -> None:
    make_embedder("default", EmbedderOptions(
        runtime="onnx", cache=model_cache, query_prompt="", passage_prompt="", threads=1,
        batch_size=4)).embed_query("warm the cache")  # the export itself needs torch
    code = (
        "import sys; from pathlib import Path;"
        "from vaultmem.index.embedders import EmbedderOptions, make_embedder;"
        f"o = EmbedderOptions('auto', Path({str(model_cache)!r}), '', '', 1, 4);"
        "e = make_embedder('default', o); e.embed(['a chunk', 'another']);"
        "e.embed_query('a query');"
        "print(type(e).__name__, sorted(m for m in ('torch', 'sentence_transformers',"
        " 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=300)
    assert out.stdout.strip() == "OnnxEmbedder []"


@pytest.mark.model
@pytest.mark.timeout(600)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/pagemap")
def test_the_weights_are_mapped_and_bulk_work_leaves_them_unmapped(model_cache: Path) -> None:
    from vaultmem.index.mapped_weights import mappings_of

    embedder = make_embedder("default", EmbedderOptions(
        runtime="onnx", cache=model_cache, query_prompt="", passage_prompt="", threads=1,
        batch_size=4))
    query = embedder.embed_query("how do I feed a sourdough starter")
    (weights,) = model_cache.glob(f"*/{WEIGHTS_NAME}")
    maps = mappings_of(weights.resolve(), Path("/proc/self/maps").read_text())
    assert sum(m.length for m in maps) > 40 * 2**20  # the word-embedding table, mapped

    def resident() -> int:
        pages = 0
        with open("/proc/self/pagemap", "rb", buffering=0) as pagemap:
            for m in maps:
                pagemap.seek(m.start // 4096 * 8)
                entries = np.frombuffer(pagemap.read(m.length // 4096 * 8), dtype=np.uint64)
                pages += int(np.count_nonzero(entries & np.uint64(1 << 63)))
        return pages * 4096

    assert resident() < 2**20  # a query's rows, not the table
    texts = [f"note {i}: " + " ".join(f"word{i * 31 + j}" for j in range(200)) for i in range(8)]
    vectors = embedder.embed(texts)
    assert resident() == 0  # released after the bulk embedding
    np.testing.assert_array_equal(embedder.embed(texts), vectors)  # read again, same bits
    np.testing.assert_array_equal(embedder.embed_query("how do I feed a sourdough starter"),
                                  query)


class _RunsSeen:
    """A session that records each run's options, then runs it."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.options: list[Any] = []

    def run(self, outputs: Any, feed: Any, options: Any = None) -> Any:
        self.options.append(options)
        return self.session.run(outputs, feed, options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)


@pytest.mark.model
@pytest.mark.timeout(600)
def test_a_bulk_embedding_ends_by_emptying_the_arena_and_queries_do_not(
    model_cache: Path,
) -> None:
    embedder = make_embedder("default", EmbedderOptions(
        runtime="onnx", cache=model_cache, query_prompt="", passage_prompt="", threads=1,
        batch_size=2))
    assert isinstance(embedder, OnnxEmbedder)
    query = embedder.embed_query("how do I feed a sourdough starter")
    texts = [f"note {i}: " + " ".join(f"word{i * 7 + j}" for j in range(150)) for i in range(5)]
    before = embedder.embed(texts)
    seen = _RunsSeen(embedder._session)
    embedder._session = seen
    np.testing.assert_array_equal(embedder.embed(texts), before)  # the same bits after it
    shrinking = [o is not None
                 and o.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
                 for o in seen.options]
    assert shrinking == [False, False, False, True]  # three model calls, then the emptying
    seen.options.clear()
    np.testing.assert_array_equal(embedder.embed_query("how do I feed a sourdough starter"),
                                  query)
    assert seen.options == [None]  # a query runs alone: its memory is a few rows'
    assert embedder.embed([]).shape == (0, 384) and seen.options == [None]
