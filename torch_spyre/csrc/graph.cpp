// SPDX-License-Identifier: MIT
/*
 * Graph capture and replay (graph.h) on libspyre's stream capture.  Each
 * card has one capture stream (a libspyre stream made at the first
 * capture); the memory of tensors made while capturing belongs to the graph
 * (allocator.h) because every replay writes it again.
 */
#include "graph.h"

#include <map>
#include <mutex>

#include "allocator.h"
#include "runtime.h"

namespace torch_spyre {

namespace {

struct graph_entry {
	graph_entry(c10::DeviceIndex i, c10::Stream prev) : index(i), previous(prev)
	{
	}
	c10::DeviceIndex index;
	c10::Stream previous;		/* the thread's stream before the capture */
	spyre_graph_exec *exec = nullptr;
	uint32_t nodes = 0;
	std::vector<at::Tensor> keep;	/* pinned sources the recorded copies read */
};

std::mutex graphs_lock;
std::map<int64_t, graph_entry> graphs;
int64_t next_graph = 1;
std::map<c10::DeviceIndex, c10::Stream> capture_streams;
thread_local std::map<c10::DeviceIndex, int64_t> tls_capture;	/* card -> graph */

graph_entry &entry(int64_t graph)
{
	auto it = graphs.find(graph);

	TORCH_CHECK(it != graphs.end(), "spyre graph ", graph, " does not exist");
	return it->second;
}

/* Undo a capture's stream switch and allocator tagging; under graphs_lock. */
void stop_recording(graph_entry &e)
{
	tls_capture.erase(e.index);
	graph_memory_end(e.index);
	exchange_stream(e.previous);
}

} // namespace

int64_t capture_begin(c10::DeviceIndex index)
{
	std::lock_guard<std::mutex> g(graphs_lock);

	TORCH_CHECK(!tls_capture.count(index), "spyre:", static_cast<int>(index),
		    " is already capturing on this thread");
	auto cs = capture_streams.find(index);

	if (cs == capture_streams.end())
		cs = capture_streams.emplace(index, new_stream(index, 0)).first;
	check(spyre_stream_begin_capture(stream_of(cs->second)),
	      "capturing a graph on spyre:" + std::to_string(index));
	int64_t id = next_graph++;

	graphs.emplace(id, graph_entry{ index, exchange_stream(cs->second) });
	tls_capture[index] = id;
	graph_memory_begin(index, static_cast<uint64_t>(id));
	return id;
}

void capture_end(int64_t graph, bool abandon)
{
	std::unique_lock<std::mutex> g(graphs_lock);
	graph_entry &e = entry(graph);
	c10::DeviceIndex index = e.index;
	spyre_graph *captured = nullptr;
	spyre_status st = spyre_stream_end_capture(stream_of(capture_streams.at(index)), &captured);
	std::string detail = st == SPYRE_SUCCESS ? "" : spyre_last_error_detail();

	stop_recording(e);
	if (st == SPYRE_SUCCESS && !abandon) {
		e.nodes = spyre_graph_num_nodes(captured);
		st = spyre_graph_instantiate(captured, &e.exec);
		if (st != SPYRE_SUCCESS)
			detail = spyre_last_error_detail();
	}
	spyre_graph_destroy(captured);
	if (st == SPYRE_SUCCESS && !abandon)
		return;
	graphs.erase(graph);
	g.unlock();
	graph_memory_release(index, static_cast<uint64_t>(graph));
	if (st != SPYRE_SUCCESS)
		TORCH_CHECK(false, "capturing a graph on spyre:", static_cast<int>(index), ": ",
			    spyre_status_name(st), " (", spyre_strerror(st), "): ", detail);
}

void replay(int64_t graph)
{
	spyre_graph_exec *exec;
	c10::DeviceIndex index;

	{
		std::lock_guard<std::mutex> g(graphs_lock);
		graph_entry &e = entry(graph);

		TORCH_CHECK(e.exec, "spyre graph ", graph, " is still being captured");
		exec = e.exec;
		index = e.index;
	}
	check(spyre_graph_launch(exec, current_spyre_stream(index)),
	      "replaying a graph on spyre:" + std::to_string(index));
}

void graph_destroy(int64_t graph)
{
	graph_entry e(0, c10::Stream(c10::Stream::DEFAULT, c10::Device(kSpyre, 0)));

	{
		std::lock_guard<std::mutex> g(graphs_lock);
		auto it = graphs.find(graph);

		if (it == graphs.end() || !it->second.exec)
			return;
		e = std::move(it->second);
		graphs.erase(it);
	}
	/* Waits for replays still queued, then the memory can be reused. */
	spyre_graph_exec_destroy(e.exec);
	graph_memory_release(e.index, static_cast<uint64_t>(graph));
}

int64_t graph_nodes(int64_t graph)
{
	std::lock_guard<std::mutex> g(graphs_lock);

	return entry(graph).nodes;
}

bool capturing(c10::DeviceIndex index)
{
	return tls_capture.count(index) != 0;
}

void capture_keep(c10::DeviceIndex index, const at::Tensor &t)
{
	std::lock_guard<std::mutex> g(graphs_lock);
	auto it = tls_capture.find(index);

	if (it != tls_capture.end())
		entry(it->second).keep.push_back(t);
}

} // namespace torch_spyre
