# SPDX-License-Identifier: MIT
"""torch.compile(model, backend="spyre"): the graph dynamo hands over is
recorded as libspyre graphs and replayed with one submission per call.

The FX graph is split where work needs the host in the middle (an embedding
lookup reads its indices on the host): those parts run eagerly, the rest
are captured.  A captured part, per input shapes:
  1st call   runs eagerly and notes where its inputs live (holding them);
  2nd call   inputs still at the same place (weights, constant tables) are
             used in place; the others get private copies; the part is
             recorded on the card's capture stream (a libspyre graph);
  later      the changed inputs are copied into the private ones, the graph
             is replayed (one SUBMIT), the outputs are copied out.
A part that cannot be recorded (its ops need the host, or the graph is
full) runs eagerly from then on; PyTorch warns once, saying why.
docs/torch.md describes it.
"""
import warnings

import torch
from torch.fx.passes.split_module import split_module

_ops = torch.ops.spyre

# Work that reads tensors on the host: left out of graphs.
_HOST_FUNCTIONS = {torch.nn.functional.embedding, torch.embedding, torch.index_select}
_HOST_METHODS = {"item", "tolist", "cpu", "numpy", "index_select"}

stats = {"captures": 0, "replays": 0, "eager_calls": 0, "eager_parts": 0}
_warned = set()


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, stacklevel=3)


def _host_bound(gm, node):
    if node.op == "call_function":
        return node.target in _HOST_FUNCTIONS
    if node.op == "call_method":
        return node.target in _HOST_METHODS
    if node.op == "call_module":
        return isinstance(gm.get_submodule(node.target), torch.nn.Embedding)
    return False


def _is_card(t):
    return isinstance(t, torch.Tensor) and t.device.type == "spyre"


def _where(t):
    return (t.data_ptr(), t.device, t.dtype, tuple(t.shape), t.stride()) if _is_card(t) else None


def _key(args):
    """What a graph is recorded for: shapes, strides, dtypes and the
    values of non-tensor arguments."""
    key = []
    for a in args:
        if isinstance(a, torch.Tensor):
            key.append((a.device, a.dtype, tuple(a.shape), a.stride()))
        else:
            key.append(repr(a))
    return tuple(key)


def _copy_out(x):
    if _is_card(x):
        return x.clone()
    if isinstance(x, (tuple, list)):
        return type(x)(_copy_out(v) for v in x)
    return x


class _Recorded:
    """One part's graph for one input signature."""

    def __init__(self, graph, fixed, statics, outs):
        self.graph, self.fixed, self.statics, self.outs = graph, fixed, statics, outs

    def run(self, args):
        for a, fixed, static in zip(args, self.fixed, self.statics):
            if fixed is not None:
                if _where(a) != fixed:
                    return None        # a weight moved: record again
            elif _is_card(a):
                static.copy_(a)
        _ops.replay(self.graph)
        stats["replays"] += 1
        return _copy_out(self.outs)

    def destroy(self):
        _ops.graph_destroy(self.graph)


class _CapturedPart(torch.nn.Module):
    def __init__(self, part, name):
        super().__init__()
        self.part, self.name = part, name
        self.seen = {}          # signature -> the first call's inputs and where they were
        self.recorded = {}      # signature -> _Recorded
        self.eager = False

    def forward(self, *args):
        if self.eager or any(isinstance(a, torch.Tensor) and not _is_card(a) and a.dim() > 0
                             for a in args):
            stats["eager_calls"] += 1
            return self.part(*args)
        key = _key(args)
        rec = self.recorded.get(key)
        if rec is not None:
            out = rec.run(args)
            if out is not None:
                return out
            rec.destroy()
            del self.recorded[key]
        if key not in self.seen:
            # The first call's inputs are held until the second: an input at
            # the same address then is the same memory, not a reuse of it.
            self.seen[key] = [(_where(a), a) for a in args]
            stats["eager_calls"] += 1
            return self.part(*args)
        rec = self._record(args, [where for where, _ in self.seen.pop(key)])
        if rec is None:
            stats["eager_calls"] += 1
            return self.part(*args)
        self.recorded[key] = rec
        return rec.run(args)

    def _record(self, args, first):
        device = next(a.device for a in args if _is_card(a))
        fixed, statics = [], []
        for a, was in zip(args, first):
            if _is_card(a) and _where(a) == was:
                fixed.append(was)
                statics.append(a)
            elif _is_card(a):
                fixed.append(None)
                s = torch.empty_strided(a.shape, a.stride(), dtype=a.dtype, device=a.device)
                s.copy_(a)
                statics.append(s)
            else:
                fixed.append(None)
                statics.append(a)
        graph = _ops.capture_begin(device.index)
        try:
            # forward(), not the GraphModule's call, which would print the
            # failure's FX context before it is reported below.
            outs = self.part.forward(*statics)
        except Exception as e:  # noqa: BLE001 - whatever stopped the recording is reported
            _ops.capture_end(graph, True)
            return self._give_up(e)
        try:
            _ops.capture_end(graph, False)
        except Exception as e:  # noqa: BLE001
            return self._give_up(e)
        stats["captures"] += 1
        return _Recorded(graph, fixed, statics, outs)

    def _give_up(self, error):
        self.eager = True
        stats["eager_parts"] += 1
        _warn_once(("part", self.name, type(error).__name__),
                   f"spyre compile: {self.name} cannot be recorded as a graph and runs eagerly: "
                   f"{str(error).splitlines()[0] if str(error) else type(error).__name__}")
        return None

    def __del__(self):
        for rec in getattr(self, "recorded", {}).values():
            try:
                rec.destroy()
            except Exception:  # noqa: BLE001,S110 - interpreter teardown
                pass


def spyre_backend(gm, example_inputs):
    """The torch.compile backend: torch.compile(model, backend="spyre")."""
    if not any(isinstance(t, torch.Tensor) and t.device.type == "spyre" for t in example_inputs):
        return gm.forward
    kinds = {}
    state = {"part": -1, "kind": None}

    def part_of(node):
        kind = "eager" if _host_bound(gm, node) else "graph"
        if kind != state["kind"]:
            state["part"] += 1
            state["kind"] = kind
            kinds[state["part"]] = kind
        return state["part"]

    split = split_module(gm, None, part_of, keep_original_order=True)
    for name, part in list(split.named_children()):
        if name.startswith("submod_") and kinds.get(int(name[len("submod_"):])) == "graph":
            setattr(split, name, _CapturedPart(part, name))
    return split
