// SPDX-License-Identifier: MIT
/*
 * torch_spyre's link to libspyre: one libspyre device open per card index
 * (opened at first use), its streams by PyTorch stream id, the calling
 * thread's current device and streams, and the one way a libspyre failure
 * becomes a PyTorch error (the status name and libspyre's detail message).
 */
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <c10/core/Device.h>
#include <c10/core/Stream.h>
#include <c10/util/Exception.h>

extern "C" {
#include <spyre/spyre.h>
#include <spyre/spyre_ops.h>
}

namespace torch_spyre {

constexpr c10::DeviceType kSpyre = c10::DeviceType::PrivateUse1;

/* Cards this process may use (0 if libspyre finds none or fails). */
c10::DeviceIndex device_count() noexcept;

/* The calling thread's current card index. */
c10::DeviceIndex current_device();
void set_current_device(c10::DeviceIndex index);

/* The libspyre open of card @index, opened at the first call; throws. */
spyre_device *device(c10::DeviceIndex index);

/* A device's streams: id 0 is the default stream, made at the device's open. */
spyre_stream *stream_of(const c10::Stream &stream);
c10::Stream default_stream(c10::DeviceIndex index);
c10::Stream new_stream(c10::DeviceIndex index, int priority);
c10::Stream current_stream(c10::DeviceIndex index);
/* Make @stream the thread's current stream of its device; returns the old one. */
c10::Stream exchange_stream(const c10::Stream &stream);
/* The libspyre stream that work on card @index goes to now. */
spyre_stream *current_spyre_stream(c10::DeviceIndex index);

/* Wait for every stream of card @index. */
void synchronize_device(c10::DeviceIndex index);

/* Throw a c10 error (torch.OutOfMemoryError for card memory) naming @what. */
[[noreturn]] void throw_status(spyre_status st, const std::string &what);

inline void check(spyre_status st, const std::string &what)
{
	if (st != SPYRE_SUCCESS)
		throw_status(st, what);
}

} // namespace torch_spyre
