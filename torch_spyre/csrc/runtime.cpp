// SPDX-License-Identifier: MIT
/*
 * Devices and streams (runtime.h).  Opens are kept for the life of the
 * process: PyTorch keeps tensors in global caches past the interpreter's
 * teardown, so libspyre's own exit handling closes them.
 */
#include "runtime.h"

#include <array>

namespace torch_spyre {

namespace {

/*
 * PyTorch never says a stream is done with (c10::Stream has no destroy),
 * so new streams come from a fixed pool per priority, handed out round
 * robin, as CUDA's getStreamFromPool does: any number of
 * torch.spyre.Stream() calls hold at most kStreamPoolSize card streams of
 * each priority.
 */
constexpr size_t kStreamPoolSize = 8;

struct card {
	std::once_flag opened;
	spyre_device *dev = nullptr;
	std::mutex lock;			/* streams, pool, pool_next */
	std::vector<spyre_stream *> streams;	/* by stream id; [0] the default */
	/* Stream ids of the pool, [0] normal priority, [1] high. */
	std::array<std::vector<c10::StreamId>, 2> pool;
	std::array<size_t, 2> pool_next{};
};

constexpr int kMaxCards = 64;
std::array<card, kMaxCards> cards;

thread_local c10::DeviceIndex tls_device = 0;
/* The thread's current stream id per card; 0 = the default stream. */
thread_local std::array<c10::StreamId, kMaxCards> tls_stream{};

card &card_at(c10::DeviceIndex index)
{
	c10::DeviceIndex n = device_count();

	TORCH_CHECK(index >= 0 && index < n, "spyre:", static_cast<int>(index),
		    " is not a card of this process: ", static_cast<int>(n),
		    " visible (SPYRE_VISIBLE_DEVICES narrows them)");
	return cards[static_cast<size_t>(index)];
}

} // namespace

[[noreturn]] void throw_status(spyre_status st, const std::string &what)
{
	std::string msg = what + ": " + spyre_status_name(st) + " (" + spyre_strerror(st) +
			  ")";
	const char *detail = spyre_last_error_detail();

	if (detail && *detail)
		msg += ": " + std::string(detail);
	if (st == SPYRE_ERROR_OUT_OF_DEVICE_MEMORY)
		TORCH_CHECK_WITH(OutOfMemoryError, false, msg);
	if (st == SPYRE_ERROR_INVALID_ARGUMENT)
		TORCH_CHECK_VALUE(false, msg);
	TORCH_CHECK(false, msg);
}

c10::DeviceIndex device_count() noexcept
{
	static c10::DeviceIndex count = [] {
		int n = 0;

		if (spyre_device_count(&n) != SPYRE_SUCCESS || n < 0)
			return static_cast<c10::DeviceIndex>(0);
		return static_cast<c10::DeviceIndex>(n < kMaxCards ? n : kMaxCards);
	}();
	return count;
}

c10::DeviceIndex current_device()
{
	return tls_device;
}

void set_current_device(c10::DeviceIndex index)
{
	card_at(index);
	tls_device = index;
}

spyre_device *device(c10::DeviceIndex index)
{
	card &c = card_at(index);
	spyre_status st = SPYRE_SUCCESS;
	std::string detail;

	std::call_once(c.opened, [&] {
		spyre_stream *s = nullptr;

		st = spyre_device_open(index, &c.dev);
		if (st == SPYRE_SUCCESS)
			st = spyre_stream_create(c.dev, SPYRE_STREAM_PRIORITY_NORMAL, &s);
		if (st != SPYRE_SUCCESS) {
			detail = spyre_last_error_detail();
			spyre_device_close(c.dev);
			c.dev = nullptr;
			return;
		}
		c.streams.push_back(s);
	});
	if (!c.dev) {
		std::string msg = "opening spyre:" + std::to_string(index);

		if (st != SPYRE_SUCCESS) {
			msg += std::string(": ") + spyre_status_name(st) + " (" + spyre_strerror(st) + ")";
			if (!detail.empty())
				msg += ": " + detail;
		} else {
			msg += " failed before (a process opens a card once)";
		}
		TORCH_CHECK(false, msg);
	}
	return c.dev;
}

spyre_stream *stream_of(const c10::Stream &stream)
{
	TORCH_CHECK(stream.device_type() == kSpyre, "not a spyre stream: ", stream);
	c10::DeviceIndex index = stream.device_index();
	card &c = card_at(index);

	device(index);
	std::lock_guard<std::mutex> g(c.lock);
	TORCH_CHECK(stream.id() >= 0 && static_cast<size_t>(stream.id()) < c.streams.size(),
		    "spyre:", static_cast<int>(index), " has no stream ", stream.id());
	return c.streams[static_cast<size_t>(stream.id())];
}

c10::Stream default_stream(c10::DeviceIndex index)
{
	device(index);
	return c10::Stream(c10::Stream::UNSAFE, c10::Device(kSpyre, index), 0);
}

c10::Stream new_stream(c10::DeviceIndex index, int priority)
{
	spyre_device *dev = device(index);
	card &c = card_at(index);
	spyre_stream *s = nullptr;

	/* PyTorch's priorities: lower is higher; 0 the default. */
	bool high = priority < 0;
	std::vector<c10::StreamId> &pool = c.pool[high];
	c10::StreamId id;

	{
		std::lock_guard<std::mutex> g(c.lock);

		if (pool.size() == kStreamPoolSize) {
			id = pool[c.pool_next[high]++ % kStreamPoolSize];
			return c10::Stream(c10::Stream::UNSAFE, c10::Device(kSpyre, index), id);
		}
	}
	check(spyre_stream_create(dev, high ? SPYRE_STREAM_PRIORITY_HIGH :
					      SPYRE_STREAM_PRIORITY_NORMAL, &s),
	      "creating a spyre stream");
	std::lock_guard<std::mutex> g(c.lock);
	if (pool.size() == kStreamPoolSize) {
		/* Another thread filled the pool meanwhile: use its stream. */
		spyre_stream_destroy(s);
		id = pool[c.pool_next[high]++ % kStreamPoolSize];
	} else {
		c.streams.push_back(s);
		id = static_cast<c10::StreamId>(c.streams.size() - 1);
		pool.push_back(id);
		c.pool_next[high]++;
	}
	return c10::Stream(c10::Stream::UNSAFE, c10::Device(kSpyre, index), id);
}

c10::Stream current_stream(c10::DeviceIndex index)
{
	device(index);
	return c10::Stream(c10::Stream::UNSAFE, c10::Device(kSpyre, index),
			   tls_stream[static_cast<size_t>(index)]);
}

c10::Stream exchange_stream(const c10::Stream &stream)
{
	c10::Stream old = current_stream(stream.device_index());

	stream_of(stream);	/* checks it exists */
	tls_stream[static_cast<size_t>(stream.device_index())] = stream.id();
	return old;
}

spyre_stream *current_spyre_stream(c10::DeviceIndex index)
{
	return stream_of(current_stream(index));
}

void synchronize_device(c10::DeviceIndex index)
{
	card &c = card_at(index);
	std::vector<spyre_stream *> all;

	device(index);
	{
		std::lock_guard<std::mutex> g(c.lock);
		all = c.streams;
	}
	for (spyre_stream *s : all)
		check(spyre_stream_synchronize(s), "synchronizing a spyre stream");
}

} // namespace torch_spyre
