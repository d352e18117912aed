// SPDX-License-Identifier: MIT
/*
 * What torch.spyre (Python) asks the extension: torch.ops.spyre.* ops, so
 * that no Python binding code is needed beyond PyTorch's own.
 */
#include <torch/library.h>

#include "allocator.h"
#include "runtime.h"

namespace torch_spyre {

namespace {

c10::DeviceIndex index_or_current(int64_t index)
{
	return index < 0 ? current_device() : static_cast<c10::DeviceIndex>(index);
}

/* allocated, reserved, peak allocated, card buffers held, card buffers ever made */
std::vector<int64_t> memory_stats_of(int64_t index)
{
	memory_stats s = stats(index_or_current(index));

	return { static_cast<int64_t>(s.allocated), static_cast<int64_t>(s.reserved),
		 static_cast<int64_t>(s.peak_allocated), static_cast<int64_t>(s.buffers),
		 static_cast<int64_t>(s.buffer_allocs) };
}

} // namespace

TORCH_LIBRARY(spyre, m)
{
	m.def("device_count() -> int", [] { return static_cast<int64_t>(device_count()); });
	m.def("current_device() -> int", [] { return static_cast<int64_t>(current_device()); });
	m.def("set_device(int index) -> ()",
	      [](int64_t i) { set_current_device(static_cast<c10::DeviceIndex>(i)); });
	m.def("synchronize(int index) -> ()", [](int64_t i) { synchronize_device(index_or_current(i)); });
	m.def("memory_stats(int index) -> int[]", &memory_stats_of);
	m.def("reset_peak_memory_stats(int index) -> ()", [](int64_t i) { reset_peak(index_or_current(i)); });
	m.def("empty_cache(int index) -> ()", [](int64_t i) { empty_cache(index_or_current(i)); });
}

} // namespace torch_spyre
