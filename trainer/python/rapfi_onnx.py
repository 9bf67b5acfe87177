"""ONNX models in the interface of Rapfi's ONNX Runtime evaluator (docs/onnx-export.md).

`renju-zero export --format onnx` runs this script (embedded in the binary) with the project's
Python; the `check` and `run` commands serve users and the tests:

    rapfi_onnx.py export WRAPPER.pt OUT.onnx --size S --model-version V --opset N
    rapfi_onnx.py check FILE.onnx --rule renju --size 15
    rapfi_onnx.py run FILE.onnx BOARD.i8 SIDE.f32 VALUE.f32 POLICY.f32

export: converts the TorchScript module that renju-zero traced (inputs `board_input` int8
  [B, 2, S, S] and `global_input` float32 [B, 1]; output float32 [B, 3 + S*S], the value logits
  then the policy logits), split into the outputs `value` float32 [B, 3] and `policy` float32
  [B, S, S], with torch's TorchScript-based exporter (`dynamo=False`), weights inside the file,
  the batch axis dynamic, and stamps the ModelProto's `model_version`.
check: reads the file as Rapfi does (ONNX Runtime: the metadata version, the input and output
  names) and refuses, with exit status 2, a file that would not serve the rule and board size.
run: evaluates the positions of raw little-endian files (`board_input` int8 [N, 2, S, S],
  `global_input` float32 [N, 1]) one at a time with ONNX Runtime, as Rapfi does (batch 1,
  one thread), and writes `value` [N, 3] and `policy` [N, S, S] as float32.
"""

import argparse
import sys

# Rapfi's rule mask bits and its only IO version (Rapfi/eval/onnxevaluator.cpp).
RULE_MASK = {"freestyle": 0x1, "standard": 0x2, "renju": 0x4}
IO_VERSION = 1
INPUTS = ("board_input", "global_input")
OUTPUTS = ("value", "policy")


def need(module, what):
    """Imports `module` or exits with a message naming the package and how to install it."""
    try:
        return __import__(module)
    except ImportError as e:
        sys.exit(
            f"error: {what} needs the Python package '{module}' ({e}); `source scripts/env.sh` "
            "installs torch, onnx and onnxruntime into the project's .venv"
        )


def export(a):
    torch = need("torch", "the ONNX export")
    onnx = need("onnx", "the ONNX export")
    import warnings

    warnings.filterwarnings("ignore")  # the TorchScript-based exporter's deprecation notice
    s = a.size

    class Split(torch.nn.Module):
        def __init__(self, traced, size: int):
            super().__init__()
            self.traced = traced
            self.size = size

        def forward(self, board_input, global_input):
            y = self.traced(board_input, global_input)
            return y[:, :3], y[:, 3:].reshape(-1, self.size, self.size)

    # Scripted, not traced: the exporter cannot trace into a loaded TorchScript module.
    module = torch.jit.script(Split(torch.jit.load(a.wrapper, map_location="cpu"), s).eval())
    board = torch.zeros(1, 2, s, s, dtype=torch.int8)
    board[0, 0, s // 2, s // 2] = 1
    side = torch.full((1, 1), 1.0)
    batch = {0: "batch"}
    torch.onnx.export(
        module,
        (board, side),
        a.out,
        input_names=list(INPUTS),
        output_names=list(OUTPUTS),
        dynamic_axes={name: batch for name in INPUTS + OUTPUTS},
        opset_version=a.opset,
        export_params=True,
        do_constant_folding=True,
        dynamo=False,
    )
    model = onnx.load(a.out)
    model.model_version = a.model_version
    model.producer_name = "renju-zero"
    model.doc_string = a.doc
    onnx.checker.check_model(model)
    onnx.save(model, a.out)


def describe_mask(version):
    rules = [r for r, bit in RULE_MASK.items() if (version >> 32) & bit]
    sizes = [n for n in range(1, 33) if version & (1 << (n - 1))]
    return f"IO version {(version >> 48) & 0xFFFF}, rules {rules or 'none'}, sizes {sizes or 'none'}"


def check(a):
    ort = need("onnxruntime", "reading the model as Rapfi does")
    session = ort.InferenceSession(a.file, providers=["CPUExecutionProvider"])
    version = session.get_modelmeta().version
    problems = []
    if (version >> 48) & 0xFFFF != IO_VERSION:
        problems.append(f"IO version {(version >> 48) & 0xFFFF}, Rapfi reads {IO_VERSION}")
    if not (version >> 32) & 0xFFFF & RULE_MASK[a.rule]:
        problems.append(f"the model is not for rule {a.rule}")
    if not version & 0xFFFFFFFF & (1 << (a.size - 1)):
        problems.append(f"the model is not for board size {a.size}")
    want = {
        "board_input": ("tensor(int8)", [2, a.size, a.size]),
        "global_input": ("tensor(float)", [1]),
        "value": ("tensor(float)", [3]),
        "policy": ("tensor(float)", [a.size, a.size]),
    }
    inputs = {i.name: i for i in session.get_inputs()}
    outputs = {o.name: o for o in session.get_outputs()}
    problems += [f"input '{n}' is not one Rapfi feeds ({', '.join(INPUTS)})" for n in inputs if n not in INPUTS]
    problems += [f"no '{n}' input" for n in ("board_input",) if n not in inputs]
    problems += [f"no '{n}' output" for n in OUTPUTS if n not in outputs]
    for name, arg in list(inputs.items()) + list(outputs.items()):
        if name in want and (arg.type, list(arg.shape[1:])) != want[name]:
            dims = ", ".join(str(d) for d in want[name][1])
            problems.append(f"'{name}' is {arg.type} {arg.shape}, Rapfi uses {want[name][0]} [B, {dims}]")
    if problems:
        print(f"refused: {a.file} (model_version {version:#018x}: {describe_mask(version)}):", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        sys.exit(2)
    print(f"ok: {a.file} serves {a.rule} on {a.size}x{a.size} (model_version {version:#018x}: {describe_mask(version)})")


def run(a):
    np = need("numpy", "running the model")
    ort = need("onnxruntime", "running the model")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(a.file, options, providers=["CPUExecutionProvider"])
    s = session.get_inputs()[[i.name for i in session.get_inputs()].index("board_input")].shape[2]
    board = np.fromfile(a.board, dtype=np.int8).reshape(-1, 2, s, s)
    side = np.fromfile(a.side, dtype="<f4").reshape(-1, 1)
    if len(board) != len(side):
        sys.exit(f"error: {len(board)} boards but {len(side)} side-to-move entries")
    values, policies = [], []
    for i in range(len(board)):
        v, p = session.run(list(OUTPUTS), {"board_input": board[i : i + 1], "global_input": side[i : i + 1]})
        values.append(v)
        policies.append(p)
    np.concatenate(values).astype("<f4").tofile(a.value)
    np.concatenate(policies).astype("<f4").tofile(a.policy)


def main(argv):
    p = argparse.ArgumentParser(prog="rapfi_onnx.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export")
    e.add_argument("wrapper")
    e.add_argument("out")
    e.add_argument("--size", type=int, required=True)
    e.add_argument("--model-version", type=int, required=True)
    e.add_argument("--opset", type=int, required=True)
    e.add_argument("--doc", default="")
    c = sub.add_parser("check")
    c.add_argument("file")
    c.add_argument("--rule", choices=sorted(RULE_MASK), required=True)
    c.add_argument("--size", type=int, required=True)
    r = sub.add_parser("run")
    for name in ("file", "board", "side", "value", "policy"):
        r.add_argument(name)
    a = p.parse_args(argv)
    {"export": export, "check": check, "run": run}[a.command](a)


if __name__ == "__main__":
    main(sys.argv[1:])
