"""A test oracle: what TensorFlow's own gradient graph keeps from the forward pass.

It traces one training step (``GradientTape`` inside ``tf.function``, as ``gpukit.memory``
measures), and collects every tensor computed in the forward pass that an op of the backward
pass reads: the tensors the allocator must hold from forward to backward. Views (reshapes,
identities) count once, with the tensor they view; variable reads and constants do not count.
Recurrent layers run as while loops whose forward pass pushes tensors onto lists for the
backward loop: :func:`loop_pushes` lists what one step pushes.

It reads graph internals of TensorFlow 2.21 and is for the tests only.
"""

from __future__ import annotations

VIEWS = {"Reshape", "Identity", "ExpandDims", "Squeeze", "IdentityN"}
NOT_ACTIVATIONS = {
    "Const",
    "ReadVariableOp",
    "Placeholder",
    "AddN",
    "Shape",
    "VarHandleOp",
    "Fill",
    "ZerosLike",
    "Max",
    "While",
    "StatelessWhile",
}


def _train_graph(model, batch: int):
    from gpukit.memory import loss_for
    from gpukit.models.registry import synthetic_batch
    from gpukit.quiet import quiet_tensorflow

    tf = quiet_tensorflow()
    import keras

    x, y = synthetic_batch(tf, model, batch)
    loss_fn, opt = loss_for(model), keras.optimizers.SGD(0.01)

    def step():
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return tf.function(step).get_concrete_function().graph


def saved_bytes(model, batch: int) -> dict[str, tuple[str, int]]:
    """Forward tensors the backward pass reads: name -> (op type, bytes)."""
    graph = _train_graph(model, batch)
    seen: dict[str, tuple[str, int]] = {}
    for op in graph.get_operations():
        if not op.name.startswith("gradient_tape"):
            continue
        for t in op.inputs:
            while t.op.type in VIEWS and t.op.inputs:
                t = t.op.inputs[0]
            if (
                t.op.name.startswith("gradient_tape")
                or t.op.type in NOT_ACTIVATIONS
                or t.dtype.name in ("variant", "resource")
            ):
                continue
            seen[t.name] = (t.op.type, (t.shape.num_elements() or 0) * t.dtype.size)
    return seen


def loop_pushes(model, batch: int) -> dict[str, list[tuple[str, tuple]]]:
    """Per forward while loop: (op type, shape) of each tensor one step pushes for the backward
    loop (the loop counter and variable reads left out)."""
    from tensorflow.python.framework import function_def_to_graph

    graph = _train_graph(model, batch)
    fdefs = {f.signature.name: f for f in graph.as_graph_def().library.function}
    out = {}
    for op in graph.get_operations():
        if op.type not in ("While", "StatelessWhile") or op.name.startswith("gradient_tape"):
            continue
        body = function_def_to_graph.function_def_to_graph(fdefs[op.get_attr("body").name])
        pushes = []
        for bop in body.get_operations():
            if bop.type == "TensorListPushBack":
                t = bop.inputs[1]
                if (
                    t.op.type in ("ReadVariableOp", "TensorListElementShape", "TensorListLength")
                    or t.dtype.name not in ("float32", "float16", "bfloat16")
                    or t.shape.rank == 0
                ):
                    continue
                pushes.append((t.op.type, tuple(t.shape.as_list()) if t.shape.rank is not None else None))
        out[op.name] = pushes
    return out
