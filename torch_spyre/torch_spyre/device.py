# SPDX-License-Identifier: MIT
"""torch.spyre: cards, streams and events, memory figures and
synchronisation (like torch.cuda)."""
import contextlib

import torch

_ops = torch.ops.spyre


def _index(device=None):
    if device is None:
        return -1
    if isinstance(device, int):
        return device
    device = torch.device(device)
    if device.type != "spyre":
        raise ValueError(f"not a spyre device: {device}")
    return -1 if device.index is None else device.index


def is_available():
    return _ops.device_count() > 0


def device_count():
    return _ops.device_count()


def current_device():
    return _ops.current_device()


def set_device(device):
    index = _index(device)
    _ops.set_device(index if index >= 0 else 0)


def _is_in_bad_fork():
    return False


def manual_seed(seed):
    """Seed the current card's generator (torch.manual_seed seeds every card)."""
    _ops.manual_seed(current_device(), int(seed))


def manual_seed_all(seed):
    for i in range(device_count()):
        _ops.manual_seed(i, int(seed))


def synchronize(device=None):
    _ops.synchronize(_index(device))


def memory_stats(device=None):
    allocated, reserved, peak, buffers, allocs = _ops.memory_stats(_index(device))
    return {"allocated_bytes": allocated, "reserved_bytes": reserved,
            "peak_allocated_bytes": peak, "card_buffers": buffers,
            "card_buffer_allocations": allocs}


def memory_allocated(device=None):
    return memory_stats(device)["allocated_bytes"]


def memory_reserved(device=None):
    return memory_stats(device)["reserved_bytes"]


def max_memory_allocated(device=None):
    return memory_stats(device)["peak_allocated_bytes"]


def reset_peak_memory_stats(device=None):
    _ops.reset_peak_memory_stats(_index(device))


def empty_cache(device=None):
    _ops.empty_cache(_index(device))


def _stream(triple):
    stream_id, index, device_type = triple
    return Stream._wrap(torch.Stream(stream_id=stream_id, device_index=index, device_type=device_type))


class Stream(torch.Stream):
    """A libspyre stream: work queued on it runs in order, streams run
    concurrently.  ``with stream:`` makes it the current stream."""

    def __new__(cls, device=None, priority=0):
        index = _index(device)
        return super().__new__(cls, torch.device("spyre", current_device() if index < 0 else index),
                               priority=priority)

    @classmethod
    def _wrap(cls, base):
        return super().__new__(cls, stream_id=base.stream_id, device_index=base.device_index,
                               device_type=base.device_type)

    def __enter__(self):
        self._previous = current_stream(self.device_index)
        set_stream(self)
        return self

    def __exit__(self, *exc):
        set_stream(self._previous)


class Event(torch.Event):
    """A libspyre event; with enable_timing, elapsed_time() reads the card's clock."""

    def __new__(cls, enable_timing=False, blocking=False):
        return super().__new__(cls, torch.device("spyre", current_device()),
                               enable_timing=enable_timing, blocking=blocking)


def current_stream(device=None):
    return _stream(_ops.current_stream(_index(device)))


def default_stream(device=None):
    return _stream(_ops.default_stream(_index(device)))


def set_stream(stream):
    if stream.device.type != "spyre":
        raise ValueError(f"not a spyre stream: {stream}")
    _ops.set_stream(stream.stream_id, stream.device_index)


@contextlib.contextmanager
def stream(s):
    """Make ``s`` the current stream of its card in the block."""
    if s is None:
        yield
        return
    previous = current_stream(s.device_index)
    set_stream(s)
    try:
        yield s
    finally:
        set_stream(previous)
