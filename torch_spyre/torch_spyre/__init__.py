# SPDX-License-Identifier: MIT
"""The Spyre card as a PyTorch device: ``import torch_spyre`` makes ``spyre``.

docs/torch.md says what is there and what is not yet.
"""
import glob
import os

import torch

_here = os.path.dirname(__file__)
_libs = glob.glob(os.path.join(_here, "_C*.so"))
if not _libs:
    raise ImportError(f"torch_spyre: its extension (_C.so) is missing from {_here}")
torch.ops.load_library(_libs[0])
torch.utils.rename_privateuse1_backend("spyre")

from . import device as _device  # noqa: E402

torch._register_device_module("spyre", _device)
torch.utils.generate_methods_for_privateuse1_backend(for_storage=True)
