"""PyTorch models into rpe-ready MLIR (``python -m rpe import-torch``).

Exports a ``torch.nn.Module`` with torch-mlir's FX importer as
linalg-on-tensors, the form ``rpe-compile`` / ``rpe.compile`` take and
``rpe-normalize-attention`` + ``rpe-fuse-attention`` raise attention from.
torch and torch-mlir are needed only here (``pip install torch torch-mlir``),
never to build or test rpe.

    python -m rpe import-torch mypkg.models:make_model -o model.mlir

``make_model`` (any importable callable) returns ``(module, example_inputs)``
with ``example_inputs`` a tuple of tensors. From Python::

    from rpe.torch_import import export
    text = export(module, (ids,), func_name="forward")
"""

import importlib
import sys


def _require_torch():
    try:
        import torch  # noqa: F401
        from torch_mlir import fx  # noqa: F401
    except ImportError as e:
        raise RuntimeError(
            "import-torch needs torch and torch-mlir (pip install torch "
            "torch-mlir): %s" % e) from None


def export(module, example_inputs, func_name="forward"):
    """MLIR text (linalg-on-tensors) of ``module`` called on
    ``example_inputs``, in eval mode, without gradients."""
    _require_torch()
    import torch
    from torch_mlir import fx
    module = module.eval()
    # torch-mlir's importer finds no state for non-persistent buffers
    # ("Could not find state mapping for buffer"; e.g. the RoPE inv_freq of
    # transformers' rotary embeddings): make them persistent.
    for sub in module.modules():
        sub._non_persistent_buffers_set.clear()
    # The same tensor passed twice is traced as one input: the exported
    # function would read its first argument for both. Distinct copies keep
    # the arguments apart.
    inputs = []
    for x in example_inputs:
        if any(x is y for y in inputs) and isinstance(x, torch.Tensor):
            x = x.clone()
        inputs.append(x)
    example_inputs = inputs
    with torch.no_grad():
        program = torch.export.export(module, tuple(example_inputs),
                                      strict=False)
        _copy_state_in_lists(program)
        imported = fx.export_and_import(program,
                                        output_type="linalg-on-tensors",
                                        func_name=func_name)
    return str(imported)


def _copy_state_in_lists(program):
    """A parameter, buffer or constant inside a list argument (e.g. Swin's
    ``table[relative_position_index]``, aten.index.Tensor(table, [index]))
    becomes a literal tensor in a list of graph values once torch-mlir
    freezes the program, which its importer rejects ("Heterogeneous lists
    are not supported"). Such list elements read a clone instead: a graph
    value of the same contents."""
    import torch
    sig = program.graph_signature
    state = (set(sig.inputs_to_parameters) | set(sig.inputs_to_buffers) |
             set(getattr(sig, "inputs_to_lifted_tensor_constants", {})))
    graph = program.graph_module.graph

    def is_state(x):
        return (isinstance(x, torch.fx.Node) and x.op == "placeholder" and
                x.name in state)

    changed = False
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        args = list(node.args)
        for i, arg in enumerate(args):
            if not isinstance(arg, (list, tuple)) or \
                    not any(is_state(x) for x in arg):
                continue
            elements = []
            for x in arg:
                if is_state(x):
                    with graph.inserting_before(node):
                        copy = graph.call_function(torch.ops.aten.clone.default,
                                                   (x,))
                    copy.meta = dict(x.meta)
                    x = copy
                elements.append(x)
            args[i] = type(arg)(elements)
            changed = True
        node.args = tuple(args)
    if changed:
        program.graph_module.recompile()


def _load_factory(spec):
    if ":" not in spec:
        raise ValueError("expected MODULE:CALLABLE, got %r" % spec)
    mod_name, attr = spec.split(":", 1)
    factory = getattr(importlib.import_module(mod_name), attr, None)
    if not callable(factory):
        raise ValueError("%s has no callable %r" % (mod_name, attr))
    return factory


def add_cli(commands):
    p = commands.add_parser(
        "import-torch", help="export a PyTorch module to rpe-ready MLIR",
        description="Export MODULE:CALLABLE's (module, example_inputs) with "
                    "torch-mlir (linalg-on-tensors).")
    p.add_argument("factory", metavar="MODULE:CALLABLE")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--func-name", default="forward")
    p.set_defaults(func=_run)


def _run(args):
    try:
        module, inputs = _load_factory(args.factory)()
        text = export(module, tuple(inputs), func_name=args.func_name)
    except (RuntimeError, ValueError, ImportError) as e:
        print("python -m rpe import-torch: %s" % e, file=sys.stderr)
        return 1
    with open(args.output, "w") as f:
        f.write(text)
    return 0
