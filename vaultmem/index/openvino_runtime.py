"""The OpenVINO runtime: the English model's ONNX graph run by OpenVINO, in bf16 where the CPU
computes bf16 (AMX or AVX-512 BF16), else in fp32.

Why: through a first index ~90 % of the daemon's CPU is the model, and 65 % of that is its
dense fp32 matmuls (docs/benchmarks.md). On a CPU with bf16 units the same graph runs ~2.5x
as fast in process (padded, 4 texts a call; a daemon's first index 2.3-2.9x), and the vectors
stay within cosine 0.99997 of fp32's (`scripts/eval` within 0.3 points); int8 moved them
two hundred times as far. bf16 vectors are not fp32's, so the model's index identity says so
(`precision_suffix`) and a switch of runtime rebuilds the index. In fp32 the vectors match
ONNX Runtime's to ~1e-7 and share its identity.

The graph is converted once into OpenVINO's own form beside the cached ONNX files
(`<graph folder>-ov1/model.xml`, `model.bin`), weights stored as fp16 (rounded again to bf16
when compiled; fp32 copies would keep ~90 MB more resident), in a child process, checked
against its manifest like the ONNX files (onnx_cache.py).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np

IR_FILES = ("model.xml", "model.bin")
#: Texts per call unless `embedding_batch_size` says otherwise: with lengths padded to
#: `PAD_TO`, 4 a call ran ~1.3x as fast as one and peaked ~20 MB higher (docs/benchmarks.md).
OPENVINO_BATCH = 4
#: Token counts are padded to a multiple of this: OpenVINO keeps compiled kernels and buffers
#: per input shape, and ~250 shapes took a first index's process from ~210 to ~500 MB (and
#: ran it at 0.8x the speed); 8 shapes keep it at ~220.
PAD_TO = 32
IR_REVISION = 1
BF16_FLAGS = ("amx_bf16", "avx512_bf16")


def openvino_available() -> bool:
    """Whether OpenVINO is installed (found without importing it)."""
    return importlib.util.find_spec("openvino") is not None


def cpu_has_bf16(cpuinfo: str) -> bool:
    """Whether a /proc/cpuinfo text names bf16 arithmetic units."""
    flags = set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags.update(line.partition(":")[2].split())
    return any(flag in flags for flag in BF16_FLAGS)


def machine_has_bf16() -> bool:
    """This machine's answer to `cpu_has_bf16` (False where there is no /proc/cpuinfo)."""
    try:
        return cpu_has_bf16(Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False


def precision_suffix(bf16: bool) -> str:
    """What the index's model identity adds for vectors computed in bf16."""
    return " (bf16)" if bf16 else ""


def ir_file(graph: Path) -> Path:
    """OpenVINO's form of the verified ONNX `graph`, made first if missing or corrupt."""
    from vaultmem.index.onnx_cache import verified_folder

    folder = graph.parent.with_name(f"{graph.parent.name}-ov{IR_REVISION}")
    made = verified_folder(folder, IR_FILES, lambda temp: _convert_in_child(graph, temp),
                           str(graph))
    return made / IR_FILES[0]


def _convert_in_child(graph: Path, out_dir: Path) -> None:
    """The conversion in a child process: its peak memory (the whole fp32 model read and
    written again) never stays in the daemon."""
    from vaultmem.index.onnx_cache import run_module

    run_module("vaultmem.index.openvino_runtime", [str(graph), str(out_dir)],
               f"cannot convert {graph} for OpenVINO")


def import_runtime() -> Any:
    """The `openvino` package without its model-conversion tools (`openvino.tools.ovc`), which
    `import openvino` loads when it can, and with them their telemetry client's set-up: the
    import in 0.11 s, not 0.16 (medians of 5), for tools vaultmem never calls (it reads and
    writes OpenVINO's own form). Python refuses a module whose `sys.modules` entry is None,
    and `openvino` skips its tools then; the entry is removed again, so an explicit import of
    the tools later still works."""
    if "openvino" in sys.modules:
        import openvino

        return openvino
    blocked = "openvino.tools.ovc" not in sys.modules
    if blocked:
        sys.modules["openvino.tools.ovc"] = None  # type: ignore[assignment]
    try:
        import openvino
    finally:
        if blocked and sys.modules.get("openvino.tools.ovc", False) is None:
            del sys.modules["openvino.tools.ovc"]
    return openvino


class OpenVinoSession:
    """A compiled model with ONNX Runtime's session calls the ONNX embedder makes (`run`,
    `get_inputs`). One request object: every call comes from the inference thread."""

    def __init__(self, xml: Path, threads: int, bf16: bool) -> None:
        ov = import_runtime()
        core = ov.Core()
        config = {"INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1,
                  "PERFORMANCE_HINT": "LATENCY",
                  "INFERENCE_PRECISION_HINT": "bf16" if bf16 else "f32"}
        self._compiled = core.compile_model(core.read_model(str(xml)), "CPU", config)
        self._request = self._compiled.create_infer_request()
        self._output = self._compiled.output(0)

    def get_inputs(self) -> list[Any]:
        return [_Named(port.get_any_name()) for port in self._compiled.inputs]

    def run(self, _outputs: Any, feed: dict[str, np.ndarray], _options: Any = None
            ) -> list[np.ndarray]:
        """The model's first output for `feed`, copied (the request reuses its buffer)."""
        result = self._request.infer(feed)
        return [np.array(result[self._output], dtype=np.float32)]

    def release(self) -> None:
        """Hand the compiled model's intermediate buffers back (made again on the next call;
        a daemon after indexing 1,000 notes kept ~15 MB more without it)."""
        self._compiled.release_memory()


class _Named:
    def __init__(self, name: str) -> None:
        self.name = name


def convert(graph: Path, out_dir: Path) -> None:
    """Write `graph` (ONNX) as OpenVINO's model.xml / model.bin, weights in fp16."""
    ov = import_runtime()
    model = ov.Core().read_model(str(graph))
    ov.save_model(model, str(out_dir / IR_FILES[0]), compress_to_fp16=True)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m vaultmem.index.openvino_runtime GRAPH.onnx OUT_DIR",
              file=sys.stderr)
        return 2
    convert(Path(args[0]), Path(args[1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
