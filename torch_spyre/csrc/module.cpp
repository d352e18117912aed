// SPDX-License-Identifier: MIT
/*
 * What torch.spyre (Python) asks the extension: torch.ops.spyre.* ops, so
 * that no Python binding code is needed beyond PyTorch's own.
 */
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <torch/library.h>

#include "allocator.h"
#include "graph.h"
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

/* A stream as torch.Stream's constructor takes it: id, card index, device type. */
std::vector<int64_t> stream_triple(const c10::Stream &s)
{
	return { s.id(), s.device_index(), static_cast<int64_t>(s.device_type()) };
}

void set_stream(int64_t id, int64_t index)
{
	c10::Stream s(c10::Stream::UNSAFE, c10::Device(kSpyre, static_cast<c10::DeviceIndex>(index)), id);

	stream_of(s);	/* throws for a stream the card does not have */
	exchange_stream(s);
}

void manual_seed(int64_t index, int64_t seed)
{
	/* The default generator, shared: seeding changes what every user sees. */
	at::Generator gen = at::detail::getPrivateUse1Hooks().getDefaultGenerator(
		static_cast<c10::DeviceIndex>(index));
	std::lock_guard<std::mutex> g(gen.mutex());

	gen.set_current_seed(static_cast<uint64_t>(seed));
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
	m.def("current_stream(int index) -> int[]",
	      [](int64_t i) { return stream_triple(current_stream(index_or_current(i))); });
	m.def("default_stream(int index) -> int[]",
	      [](int64_t i) { return stream_triple(default_stream(index_or_current(i))); });
	m.def("set_stream(int id, int index) -> ()", &set_stream);
	m.def("manual_seed(int index, int seed) -> ()", &manual_seed);
	m.def("capture_begin(int index) -> int",
	      [](int64_t i) { return capture_begin(index_or_current(i)); });
	m.def("capture_end(int graph, bool abandon) -> ()", &capture_end);
	m.def("replay(int graph) -> ()", &replay);
	m.def("graph_destroy(int graph) -> ()", &graph_destroy);
	m.def("graph_nodes(int graph) -> int", &graph_nodes);
	m.def("empty_cache(int index) -> ()", [](int64_t i) { empty_cache(index_or_current(i)); });
}

} // namespace torch_spyre
