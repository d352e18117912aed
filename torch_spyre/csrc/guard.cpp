// SPDX-License-Identifier: MIT
/*
 * PyTorch's device interfaces for spyre (PrivateUse1): the device guard
 * (current card, streams, events) and the hooks (pinned memory, which card
 * a pointer is on, the default generator).  Events are libspyre events,
 * made when first recorded on the recording stream's card.
 */
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "allocator.h"
#include "runtime.h"

namespace torch_spyre {

namespace {

struct event_state {
	spyre_event *ev;
	c10::DeviceIndex index;
};

struct guard_impl final : c10::impl::DeviceGuardImplInterface {
	c10::DeviceType type() const override
	{
		return kSpyre;
	}
	c10::Device exchangeDevice(c10::Device d) const override
	{
		c10::Device old = getDevice();

		if (d.index() != old.index())
			set_current_device(d.index());
		return old;
	}
	c10::Device getDevice() const override
	{
		return c10::Device(kSpyre, current_device());
	}
	void setDevice(c10::Device d) const override
	{
		TORCH_CHECK(d.type() == kSpyre, "not a spyre device: ", d);
		set_current_device(d.index());
	}
	void uncheckedSetDevice(c10::Device d) const noexcept override
	{
		try {
			set_current_device(d.index());
		} catch (...) {
		}
	}
	c10::Stream getStream(c10::Device d) const noexcept override
	{
		try {
			return current_stream(d.index());
		} catch (...) {
			return c10::Stream(c10::Stream::UNSAFE, d, 0);
		}
	}
	c10::Stream getDefaultStream(c10::Device d) const override
	{
		return default_stream(d.index());
	}
	c10::Stream getStreamFromGlobalPool(c10::Device d, bool high) const override
	{
		return new_stream(d.index(), high ? -1 : 0);
	}
	c10::Stream getNewStream(c10::Device d, int priority) const override
	{
		return new_stream(d.index(), priority);
	}
	c10::Stream exchangeStream(c10::Stream s) const noexcept override
	{
		try {
			return exchange_stream(s);
		} catch (...) {
			return s;
		}
	}
	c10::DeviceIndex deviceCount() const noexcept override
	{
		return device_count();
	}

	void destroyEvent(void *event, const c10::DeviceIndex) const noexcept override
	{
		auto *e = static_cast<event_state *>(event);

		if (!e)
			return;
		spyre_event_destroy(e->ev);
		delete e;
	}
	void record(void **event, const c10::Stream &stream, const c10::DeviceIndex,
		    const c10::EventFlag) const override
	{
		auto *e = static_cast<event_state *>(*event);
		spyre_stream *s = stream_of(stream);

		if (e && e->index != stream.device_index())
			TORCH_CHECK(false, "a spyre event recorded on spyre:",
				    static_cast<int>(e->index), " cannot be recorded on spyre:",
				    static_cast<int>(stream.device_index()));
		if (!e) {
			spyre_event *ev = nullptr;

			check(spyre_event_create(device(stream.device_index()), &ev),
			      "creating a spyre event");
			e = new event_state{ ev, stream.device_index() };
			*event = e;
		}
		check(spyre_event_record(e->ev, s), "recording a spyre event");
	}
	void block(void *event, const c10::Stream &stream) const override
	{
		auto *e = static_cast<event_state *>(event);

		if (!e)
			return;	/* never recorded: nothing to wait for */
		check(spyre_stream_wait_event(stream_of(stream), e->ev),
		      "making a spyre stream wait for an event");
	}
	bool queryEvent(void *event) const override
	{
		auto *e = static_cast<event_state *>(event);

		if (!e)
			return true;
		spyre_status st = spyre_event_query(e->ev);

		if (st == SPYRE_ERROR_NOT_READY)
			return false;
		check(st, "querying a spyre event");
		return true;
	}
	void synchronizeEvent(void *event) const override
	{
		auto *e = static_cast<event_state *>(event);

		if (e)
			check(spyre_event_synchronize(e->ev), "waiting for a spyre event");
	}
	double elapsedTime(void *start, void *end, const c10::DeviceIndex) const override
	{
		auto *a = static_cast<event_state *>(start), *b = static_cast<event_state *>(end);
		double ms = 0;

		TORCH_CHECK(a && b, "elapsed_time: both events must have been recorded");
		check(spyre_event_elapsed_ms(a->ev, b->ev, &ms), "timing spyre events");
		return ms;
	}
	bool queryStream(const c10::Stream &stream) const override
	{
		spyre_status st = spyre_stream_query(stream_of(stream));

		if (st == SPYRE_ERROR_NOT_READY)
			return false;
		check(st, "querying a spyre stream");
		return true;
	}
	void synchronizeStream(const c10::Stream &stream) const override
	{
		check(spyre_stream_synchronize(stream_of(stream)), "synchronizing a spyre stream");
	}
	void synchronizeDevice(const c10::DeviceIndex index) const override
	{
		synchronize_device(index);
	}
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, guard_impl);

/* Random numbers for spyre tensors are made on the CPU (the fallback runs
 * the random ops there), so the generator is a CPU one tagged spyre. */
struct spyre_generator : at::CPUGeneratorImpl {
	explicit spyre_generator(c10::DeviceIndex index)
	{
		device_ = c10::Device(kSpyre, index);
		key_set_ = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
	}
};

at::Generator make_generator(c10::DeviceIndex index)
{
	return at::make_generator<spyre_generator>(index);
}

struct hooks final : at::PrivateUse1HooksInterface {
	const at::Generator &getDefaultGenerator(c10::DeviceIndex index) const override
	{
		static std::array<at::Generator, 64> gens;
		static std::mutex lock;
		c10::DeviceIndex i = index < 0 ? current_device() : index;
		std::lock_guard<std::mutex> g(lock);

		TORCH_CHECK(i < device_count(), "spyre:", static_cast<int>(i), " does not exist");
		if (!gens[static_cast<size_t>(i)].defined())
			gens[static_cast<size_t>(i)] = make_generator(i);
		return gens[static_cast<size_t>(i)];
	}
	at::Device getDeviceFromPtr(void *) const override
	{
		return c10::Device(kSpyre, current_device());
	}
	bool isPinnedPtr(const void *data) const override
	{
		return is_pinned(data);
	}
	at::Allocator *getPinnedMemoryAllocator() const override
	{
		return pinned_allocator();
	}
	bool hasPrimaryContext(c10::DeviceIndex index) const override
	{
		return index >= 0 && index < device_count();
	}
	void resizePrivateUse1Bytes(const c10::Storage &storage, size_t newsize) const override
	{
		c10::DataPtr fresh = device_allocator()->allocate(newsize);
		size_t keep = std::min(newsize, storage.nbytes());

		if (keep) {
			buffer_ref d = lookup_device(fresh.device().index(), fresh.get());
			buffer_ref s = lookup_device(storage.device().index(), storage.data());

			check(spyre_memcpy_dtod_async(current_spyre_stream(fresh.device().index()),
						      d.buf, d.offset, s.buf, s.offset, keep),
			      "copying a resized storage");
		}
		storage.unsafeGetStorageImpl()->set_data_ptr_noswap(std::move(fresh));
		storage.unsafeGetStorageImpl()->set_nbytes(newsize);
	}
};

hooks the_hooks;

struct registrar {
	registrar()
	{
		at::RegisterPrivateUse1HooksInterface(&the_hooks);
		REGISTER_GENERATOR_PRIVATEUSE1(make_generator)
	}
};
registrar register_once;

} // namespace

} // namespace torch_spyre
