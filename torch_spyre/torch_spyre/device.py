# SPDX-License-Identifier: MIT
"""torch.spyre: cards, memory figures and synchronisation (like torch.cuda)."""
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
