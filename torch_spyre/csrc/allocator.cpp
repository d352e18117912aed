// SPDX-License-Identifier: MIT
/* The caching card allocator and pinned host memory (allocator.h). */
#include "allocator.h"

#include <array>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace torch_spyre {

namespace {

constexpr uint64_t kSmallMax = 1ull << 20;	/* carved out of shared buffers up to here */
constexpr uint64_t kSmallStep = 512;
constexpr uint64_t kSegment = 2ull << 20;	/* a shared buffer; large sizes round to it */

struct segment {
	spyre_buffer *buf;
	uint64_t base, bytes;
	bool small;
};

struct block {
	segment *seg;
	uint64_t bytes;
	bool free;
};

struct pool {
	std::mutex lock;
	std::map<uint64_t, block> blocks;			/* by address */
	std::set<std::pair<uint64_t, uint64_t>> free_small;	/* (bytes, address) */
	std::set<std::pair<uint64_t, uint64_t>> free_large;
	memory_stats st{};
	/* Graphs: blocks allocated while one captures belong to it (a replay
	 * writes them), so a tensor's free holds them until the graph goes. */
	uint64_t capturing = 0;				/* the graph capturing, or 0 */
	std::map<uint64_t, uint64_t> graph_of;		/* block address -> graph */
	std::map<uint64_t, std::vector<uint64_t>> held;	/* graph -> blocks freed */
};

std::array<pool, 64> pools;

pool &pool_of(c10::DeviceIndex index)
{
	TORCH_CHECK(index >= 0 && index < device_count(), "spyre:", static_cast<int>(index),
		    " is not a card of this process");
	return pools[static_cast<size_t>(index)];
}

uint64_t round_up(uint64_t v, uint64_t step)
{
	return (v + step - 1) / step * step;
}

/* Free segments that are one free block; under p.lock. */
void release_cached(pool &p)
{
	for (auto it = p.blocks.begin(); it != p.blocks.end();) {
		block &b = it->second;

		if (!b.free || it->first != b.seg->base || b.bytes != b.seg->bytes) {
			++it;
			continue;
		}
		segment *seg = b.seg;

		(b.seg->small ? p.free_small : p.free_large).erase({ b.bytes, it->first });
		it = p.blocks.erase(it);
		/* Queued work using it is waited for by libspyre. */
		spyre_buffer_free(seg->buf);
		p.st.reserved -= seg->bytes;
		p.st.buffers--;
		delete seg;
	}
}

/* A new segment of @bytes as one free block; under p.lock. */
void grow(pool &p, c10::DeviceIndex index, uint64_t bytes, bool small)
{
	spyre_buffer *buf = nullptr;
	spyre_status st = spyre_buffer_alloc(device(index), bytes, SPYRE_MEM_DEVICE, &buf);

	if (st == SPYRE_ERROR_OUT_OF_DEVICE_MEMORY) {
		release_cached(p);
		st = spyre_buffer_alloc(device(index), bytes, SPYRE_MEM_DEVICE, &buf);
	}
	if (st != SPYRE_SUCCESS) {
		throw_status(st, "allocating " + std::to_string(bytes) + " bytes on spyre:" +
					 std::to_string(index) + " (" +
					 std::to_string(p.st.allocated) + " bytes in tensors, " +
					 std::to_string(p.st.reserved) + " reserved)");
	}
	auto *seg = new segment{ buf, spyre_buffer_device_address(buf), bytes, small };

	p.blocks[seg->base] = block{ seg, bytes, true };
	(small ? p.free_small : p.free_large).insert({ bytes, seg->base });
	p.st.reserved += bytes;
	p.st.buffers++;
	p.st.buffer_allocs++;
}

uint64_t take(pool &p, c10::DeviceIndex index, uint64_t want)
{
	bool small = want <= kSmallMax;
	uint64_t bytes = round_up(want ? want : 1, small ? kSmallStep : kSegment);
	auto &free_set = small ? p.free_small : p.free_large;
	auto it = free_set.lower_bound({ bytes, 0 });

	/* A cached large buffer is reused only if it is less than twice the request. */
	if (it == free_set.end() || (!small && it->first >= 2 * bytes)) {
		grow(p, index, small ? kSegment : bytes, small);
		it = free_set.lower_bound({ bytes, 0 });
	}
	uint64_t addr = it->second;
	block &b = p.blocks.at(addr);

	free_set.erase(it);
	if (small && b.bytes > bytes) {
		p.blocks[addr + bytes] = block{ b.seg, b.bytes - bytes, true };
		p.free_small.insert({ b.bytes - bytes, addr + bytes });
		b.bytes = bytes;
	}
	b.free = false;
	if (p.capturing)
		p.graph_of[addr] = p.capturing;
	p.st.allocated += b.bytes;
	if (p.st.allocated > p.st.peak_allocated)
		p.st.peak_allocated = p.st.allocated;
	return addr;
}

void give_back(pool &p, uint64_t addr)
{
	auto it = p.blocks.find(addr);

	if (it == p.blocks.end() || it->second.free)
		return;	/* not ours: nothing to do (never happens) */
	block &b = it->second;
	auto &free_set = b.seg->small ? p.free_small : p.free_large;

	b.free = true;
	p.st.allocated -= b.bytes;
	if (b.seg->small) {
		/* Merge with free neighbours of the same buffer. */
		auto next = std::next(it);

		if (next != p.blocks.end() && next->second.free && next->second.seg == b.seg) {
			free_set.erase({ next->second.bytes, next->first });
			b.bytes += next->second.bytes;
			p.blocks.erase(next);
		}
		if (it != p.blocks.begin()) {
			auto prev = std::prev(it);

			if (prev->second.free && prev->second.seg == b.seg) {
				free_set.erase({ prev->second.bytes, prev->first });
				prev->second.bytes += b.bytes;
				p.blocks.erase(it);
				it = prev;
			}
		}
	}
	free_set.insert({ it->second.bytes, it->first });
}

struct alloc_ctx {
	c10::DeviceIndex index;
	uint64_t addr;
};

void free_device(void *ctx)
{
	auto *c = static_cast<alloc_ctx *>(ctx);
	pool &p = pools[static_cast<size_t>(c->index)];

	{
		std::lock_guard<std::mutex> g(p.lock);
		auto owner = p.graph_of.find(c->addr);

		if (owner != p.graph_of.end())
			p.held[owner->second].push_back(c->addr);
		else
			give_back(p, c->addr);
	}
	delete c;
}

struct device_alloc final : c10::Allocator {
	c10::DataPtr allocate(size_t n) override
	{
		c10::DeviceIndex index = current_device();
		pool &p = pool_of(index);

		if (!n)
			return { nullptr, nullptr, &free_noop, c10::Device(kSpyre, index) };
		device(index);
		std::lock_guard<std::mutex> g(p.lock);
		uint64_t addr = take(p, index, n);
		void *ptr = reinterpret_cast<void *>(static_cast<uintptr_t>(addr));

		return { ptr, new alloc_ctx{ index, addr }, &free_device,
			 c10::Device(kSpyre, index) };
	}
	c10::DeleterFnPtr raw_deleter() const override
	{
		return nullptr;	/* the context, not the pointer, frees */
	}
	void copy_data(void *dest, const void *src, std::size_t count) const override
	{
		buffer_ref d = lookup_device(current_device(), dest);
		buffer_ref s = lookup_device(current_device(), src);

		check(spyre_memcpy_dtod(d.buf, d.offset, s.buf, s.offset, count),
		      "copying card memory");
	}
	static void free_noop(void *)
	{
	}
};

/* ---- pinned host memory ---- */

struct pinned_block {
	c10::DeviceIndex index;
	spyre_buffer *buf;
	uint64_t bytes;
};

std::mutex pinned_lock;
std::map<uintptr_t, pinned_block> pinned;

void free_pinned(void *ptr)
{
	pinned_block b;

	{
		std::lock_guard<std::mutex> g(pinned_lock);
		auto it = pinned.find(reinterpret_cast<uintptr_t>(ptr));

		if (it == pinned.end())
			return;
		b = it->second;
		pinned.erase(it);
	}
	spyre_buffer_free(b.buf);
}

struct pinned_alloc final : c10::Allocator {
	c10::DataPtr allocate(size_t n) override
	{
		c10::DeviceIndex index = current_device();
		spyre_buffer *buf = nullptr;
		void *ptr = nullptr;

		if (!n)
			return { nullptr, nullptr, &free_pinned, c10::Device(c10::DeviceType::CPU) };
		check(spyre_buffer_alloc(device(index), n, SPYRE_MEM_HOST, &buf),
		      "allocating pinned host memory for spyre");
		check(spyre_buffer_map(buf, &ptr), "mapping pinned host memory");
		{
			std::lock_guard<std::mutex> g(pinned_lock);
			pinned[reinterpret_cast<uintptr_t>(ptr)] = pinned_block{ index, buf, n };
		}
		return { ptr, ptr, &free_pinned, c10::Device(c10::DeviceType::CPU) };
	}
	c10::DeleterFnPtr raw_deleter() const override
	{
		return &free_pinned;
	}
	void copy_data(void *dest, const void *src, std::size_t count) const override
	{
		default_copy_data(dest, src, count);
	}
};

device_alloc the_device_alloc;
pinned_alloc the_pinned_alloc;

} // namespace

c10::Allocator *device_allocator()
{
	return &the_device_alloc;
}

c10::Allocator *pinned_allocator()
{
	return &the_pinned_alloc;
}

buffer_ref lookup_device(c10::DeviceIndex index, const void *ptr)
{
	pool &p = pool_of(index);
	uint64_t addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(ptr));
	std::lock_guard<std::mutex> g(p.lock);
	auto it = p.blocks.upper_bound(addr);

	TORCH_CHECK(it != p.blocks.begin(), "spyre:", static_cast<int>(index),
		    " has no memory at 0x", std::hex, addr);
	--it;
	const block &b = it->second;
	TORCH_CHECK(!b.free && addr < it->first + b.bytes, "spyre:", static_cast<int>(index),
		    " has no live tensor memory at 0x", std::hex, addr,
		    " (a tensor used after its memory was freed?)");
	return { b.seg->buf, addr - b.seg->base, it->first + b.bytes - addr };
}

buffer_ref lookup_pinned(c10::DeviceIndex index, const void *ptr, uint64_t bytes)
{
	uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
	std::lock_guard<std::mutex> g(pinned_lock);
	auto it = pinned.upper_bound(a);

	if (it == pinned.begin())
		return { nullptr, 0, 0 };
	--it;
	if (it->second.index != index || a + bytes > it->first + it->second.bytes)
		return { nullptr, 0, 0 };
	return { it->second.buf, a - it->first, it->first + it->second.bytes - a };
}

bool is_pinned(const void *ptr)
{
	uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
	std::lock_guard<std::mutex> g(pinned_lock);
	auto it = pinned.upper_bound(a);

	if (it == pinned.begin())
		return false;
	--it;
	return a < it->first + it->second.bytes;
}

memory_stats stats(c10::DeviceIndex index)
{
	pool &p = pool_of(index);
	std::lock_guard<std::mutex> g(p.lock);

	return p.st;
}

void reset_peak(c10::DeviceIndex index)
{
	pool &p = pool_of(index);
	std::lock_guard<std::mutex> g(p.lock);

	p.st.peak_allocated = p.st.allocated;
}

void empty_cache(c10::DeviceIndex index)
{
	pool &p = pool_of(index);
	std::lock_guard<std::mutex> g(p.lock);

	release_cached(p);
}

void graph_memory_begin(c10::DeviceIndex index, uint64_t graph)
{
	pool &p = pool_of(index);
	std::lock_guard<std::mutex> g(p.lock);

	p.capturing = graph;
}

void graph_memory_end(c10::DeviceIndex index)
{
	pool &p = pool_of(index);
	std::lock_guard<std::mutex> g(p.lock);

	p.capturing = 0;
}

void graph_memory_release(c10::DeviceIndex index, uint64_t graph)
{
	pool &p = pool_of(index);
	std::lock_guard<std::mutex> g(p.lock);

	for (auto it = p.graph_of.begin(); it != p.graph_of.end();)
		it = it->second == graph ? p.graph_of.erase(it) : std::next(it);
	for (uint64_t addr : p.held[graph])
		give_back(p, addr);
	p.held.erase(graph);
}

} // namespace torch_spyre
