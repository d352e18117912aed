// SPDX-License-Identifier: MIT
/*
 * Tensors on the card: creation (empty, empty_strided), views (as_strided,
 * view, _reshape_alias), copies between the CPU and cards (_copy_from),
 * fill_, cat, and index_select along rows (embedding lookups).  Element
 * moves on the card are libspyre strided copies, so a view of any strides
 * copies without a round trip through the host.
 */
#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "allocator.h"
#include "fallback.h"
#include "graph.h"
#include "ops.h"
#include "runtime.h"
#include "tensor.h"

namespace torch_spyre {

buffer_ref ref_of(const at::Tensor &t)
{
	buffer_ref r = lookup_device(t.device().index(), t.storage().data());

	r.offset += static_cast<uint64_t>(t.storage_offset()) * t.element_size();
	return r;
}

void card_copy(const at::Tensor &dst, const at::Tensor &src)
{
	if (!dst.numel())
		return;
	uint32_t ndim = static_cast<uint32_t>(std::max<int64_t>(dst.dim(), 1));
	TORCH_CHECK(ndim <= SPYRE_COPY_MAX_DIMS, "spyre copies take at most ",
		    SPYRE_COPY_MAX_DIMS, " dimensions, not ", ndim);
	std::vector<uint64_t> shape(ndim, 1), ds(ndim, 0), ss(ndim, 0);
	uint64_t elem = dst.element_size();

	for (int64_t i = 0; i < dst.dim(); i++) {
		shape[i] = static_cast<uint64_t>(dst.size(i));
		ds[i] = static_cast<uint64_t>(dst.stride(i)) * elem;
		ss[i] = static_cast<uint64_t>(src.stride(i)) * elem;
	}
	buffer_ref d = ref_of(dst), s = ref_of(src);

	check(spyre_memcpy_strided_async(current_spyre_stream(dst.device().index()), ndim,
					 shape.data(), static_cast<uint32_t>(elem), d.buf, d.offset,
					 ds.data(), s.buf, s.offset, ss.data()),
	      "copying on spyre:" + std::to_string(dst.device().index()));
}

void host_to_card(const at::Tensor &dst, const at::Tensor &src, bool non_blocking)
{
	c10::DeviceGuard g(dst.device());
	c10::DeviceIndex index = dst.device().index();
	at::Tensor host = src.to(dst.scalar_type()).expand(dst.sizes()).contiguous();
	at::Tensor target = dst.is_contiguous() ? dst : at::empty(dst.sizes(), dst.options());
	buffer_ref d = ref_of(target);
	spyre_stream *s = current_spyre_stream(index);
	bool recording = capturing(index);

	/* A graph records copies from pinned memory only, reading it at each
	 * replay: the values (a mask, a number) go to pinned memory the graph
	 * keeps. */
	if (recording && !host.is_pinned()) {
		at::Tensor staged = at::detail::empty_generic(host.sizes(), pinned_allocator(),
							      c10::DispatchKeySet(c10::DispatchKey::CPU),
							      host.scalar_type(), std::nullopt);

		staged.copy_(host);
		capture_keep(index, staged);
		host = staged;
	}
	bool pinned = host.is_pinned();

	check(spyre_memcpy_htod_async(s, d.buf, d.offset, host.const_data_ptr(), host.nbytes()),
	      "copying to spyre:" + std::to_string(index));
	if (!target.is_same(dst))
		card_copy(dst, target);
	/* Pageable memory is read during the call; pinned memory when the stream
	 * gets there, so a blocking copy waits for it (a recording one cannot). */
	if (pinned && !non_blocking && !recording)
		check(spyre_stream_synchronize(s), "waiting for a copy to spyre");
}

namespace {

constexpr c10::DispatchKeySet kSpyreKeys(c10::DispatchKey::PrivateUse1);

at::Tensor empty_memory_format(at::IntArrayRef size, std::optional<at::ScalarType> dtype,
			       std::optional<at::Layout>, std::optional<at::Device> dev,
			       std::optional<bool>, std::optional<at::MemoryFormat> format)
{
	c10::DeviceGuard g(dev.value_or(c10::Device(kSpyre, current_device())));

	return at::detail::empty_generic(size, device_allocator(), kSpyreKeys,
					 c10::dtype_or_default(dtype), format);
}

at::Tensor empty_strided(at::IntArrayRef size, at::IntArrayRef stride,
			 std::optional<at::ScalarType> dtype, std::optional<at::Layout>,
			 std::optional<at::Device> dev, std::optional<bool>)
{
	c10::DeviceGuard g(dev.value_or(c10::Device(kSpyre, current_device())));

	return at::detail::empty_strided_generic(size, stride, device_allocator(), kSpyreKeys,
						 c10::dtype_or_default(dtype));
}

/* Card -> CPU: dense on the card, DMA out, then into @dst's dtype and strides. */
void card_to_host(const at::Tensor &dst, const at::Tensor &src, bool non_blocking)
{
	c10::DeviceGuard g(src.device());
	at::Tensor dense = src.is_contiguous() ? src : src.contiguous();
	bool direct = dst.is_contiguous() && dst.scalar_type() == src.scalar_type() &&
		      dst.sizes() == src.sizes();
	at::Tensor host = direct ? dst : at::empty(src.sizes(), src.options().device(at::kCPU));
	buffer_ref s = ref_of(dense);
	spyre_stream *st = current_spyre_stream(src.device().index());

	check(spyre_memcpy_dtoh_async(st, host.mutable_data_ptr(), s.buf, s.offset,
				      dense.nbytes()),
	      "copying from spyre:" + std::to_string(src.device().index()));
	/* Only a pinned destination is written by the card itself: anything
	 * else is written when the stream is synchronised. */
	if (!(non_blocking && direct && host.is_pinned()))
		check(spyre_stream_synchronize(st), "waiting for a copy from spyre");
	if (!direct)
		dst.copy_(host);
}

at::Tensor copy_from(const at::Tensor &self, const at::Tensor &dst, bool non_blocking)
{
	bool from_card = self.device().type() == kSpyre, to_card = dst.device().type() == kSpyre;

	TORCH_CHECK(from_card || self.is_cpu(), "spyre copies from the CPU or a spyre card, not ",
		    self.device());
	TORCH_CHECK(to_card || dst.is_cpu(), "spyre copies to the CPU or a spyre card, not ",
		    dst.device());
	if (!from_card) {
		host_to_card(dst, self, non_blocking);
	} else if (!to_card) {
		card_to_host(dst, self, non_blocking);
	} else if (self.device() == dst.device() && self.scalar_type() == dst.scalar_type()) {
		c10::DeviceGuard g(dst.device());

		card_copy(dst, self.expand(dst.sizes()));
	} else if (self.device() == dst.device() && convert_on_card(dst, self.expand(dst.sizes()))) {
		/* Converted by the op library. */
	} else {
		/* Another card, or a dtype the card does not compute: through the host. */
		at::Tensor host = at::empty(self.sizes(), self.options().device(at::kCPU));

		card_to_host(host, self, false);
		host_to_card(dst, host, non_blocking);
	}
	return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor &self, const at::Tensor &dst)
{
	if (dst.sizes() != self.sizes())
		at::native::resize_(dst, self.sizes());
	return copy_from(self, dst, false);
}

/* A scalar's bytes in @t's dtype, broadcast into every element of @t. */
at::Tensor &fill_scalar(at::Tensor &self, const at::Scalar &value)
{
	if (!self.numel())
		return self;
	c10::DeviceGuard g(self.device());
	at::Tensor one = at::empty({ 1 }, self.options());

	host_to_card(one, at::scalar_tensor(value, self.options().device(at::kCPU)).reshape({ 1 }),
		     false);
	card_copy(self, one.expand(self.sizes()));
	return self;
}

at::Tensor &zero(at::Tensor &self)
{
	return fill_scalar(self, 0);
}

/* cat: each input copied into its slice of the result on the card. */
at::Tensor cat(const at::ITensorListRef &list, int64_t dim)
{
	std::vector<at::Tensor> ts;

	for (const at::Tensor &t : list)
		ts.push_back(t);
	/* PyTorch skips legacy empty 1-D inputs. */
	std::vector<at::Tensor> parts;
	for (const at::Tensor &t : ts)
		if (!(t.dim() == 1 && t.numel() == 0))
			parts.push_back(t);
	bool card = !parts.empty();

	for (const at::Tensor &t : parts)
		card = card && t.device() == parts[0].device() && t.scalar_type() == parts[0].scalar_type();
	if (!card)
		return on_cpu<at::Tensor>("aten::cat", "", at::TensorList(ts), dim);
	const at::Tensor &first = parts[0];
	int64_t d = c10::maybe_wrap_dim(dim, first.dim());
	std::vector<int64_t> shape = first.sizes().vec();

	shape[d] = 0;
	for (const at::Tensor &t : parts) {
		TORCH_CHECK(t.dim() == first.dim(), "torch.cat(): tensors must have the same number of ",
			    "dimensions: got ", first.dim(), " and ", t.dim());
		for (int64_t i = 0; i < t.dim(); i++)
			TORCH_CHECK(i == d || t.size(i) == first.size(i), "torch.cat(): sizes of tensors ",
				    "must match except in dimension ", d, ": expected size ", first.size(i),
				    " but got size ", t.size(i), " in dimension ", i);
		shape[d] += t.size(d);
	}
	c10::DeviceGuard g(first.device());
	at::Tensor out = at::empty(shape, first.options());
	int64_t at_ = 0;

	for (const at::Tensor &t : parts) {
		card_copy(out.narrow(d, at_, t.size(d)), t);
		at_ += t.size(d);
	}
	return out;
}

/* index_select along dim 0 (an embedding lookup): the indices read on the
 * host, the rows gathered by one libspyre row gather (a strided source:
 * one strided copy per run of consecutive indices). */
at::Tensor index_select(const at::Tensor &self, int64_t dim, const at::Tensor &index)
{
	int64_t d = c10::maybe_wrap_dim(dim, std::max<int64_t>(self.dim(), 1));

	if (d != 0 || self.dim() == 0 || index.dim() > 1 ||
	    (index.scalar_type() != at::kLong && index.scalar_type() != at::kInt) ||
	    (index.device().type() == kSpyre && index.device() != self.device()))
		return on_cpu<at::Tensor>("aten::index_select", "", self, dim, index);
	at::Tensor idx = index.to(at::kCPU, at::kLong).contiguous().view({ -1 });
	const int64_t *ix = idx.const_data_ptr<int64_t>();
	int64_t n = idx.numel(), rows = self.size(0);
	std::vector<int64_t> shape = self.sizes().vec();

	for (int64_t i = 0; i < n; i++)
		TORCH_CHECK_INDEX(ix[i] >= 0 && ix[i] < rows, "index_select(): index ", ix[i],
				  " is out of bounds for dimension 0 with size ", rows);
	shape[0] = n;
	c10::DeviceGuard g(self.device());
	at::Tensor out = at::empty(shape, self.options());

	if (!out.numel())
		return out;
	if (self.is_contiguous()) {
		uint64_t row = static_cast<uint64_t>(self.numel() / rows) * self.element_size();
		buffer_ref s = ref_of(self), o = ref_of(out);

		check(spyre_memcpy_gather_async(current_spyre_stream(self.device().index()), o.buf,
						o.offset, s.buf, s.offset, static_cast<uint64_t>(rows),
						row, static_cast<uint64_t>(n),
						reinterpret_cast<const uint64_t *>(ix)),
		      "index_select on spyre:" + std::to_string(self.device().index()));
		return out;
	}
	for (int64_t i = 0; i < n;) {
		int64_t j = i + 1;

		while (j < n && ix[j] == ix[j - 1] + 1)
			j++;
		card_copy(out.narrow(0, i, j - i), self.narrow(0, ix[i], j - i));
		i = j;
	}
	return out;
}

const at::Tensor &resize(const at::Tensor &self, at::IntArrayRef size,
			 std::optional<at::MemoryFormat> format)
{
	c10::DeviceGuard g(self.device());
	at::TensorImpl *impl = self.unsafeGetTensorImpl();
	uint64_t need = at::detail::computeStorageNbytesContiguous(size, impl->dtype().itemsize(),
								   impl->storage_offset());

	impl->set_sizes_contiguous(size);
	if (need > impl->storage().nbytes())
		at::detail::getPrivateUse1Hooks().resizePrivateUse1Bytes(impl->storage(), need);
	if (format && *format != at::MemoryFormat::Preserve)
		impl->empty_tensor_restride(*format);
	return self;
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("empty.memory_format", &empty_memory_format);
	m.impl("empty_strided", &empty_strided);
	m.impl("as_strided", &at::native::as_strided_tensorimpl);
	m.impl("view", &at::native::view);
	m.impl("_reshape_alias", &at::native::_reshape_alias);
	m.impl("_copy_from", &copy_from);
	m.impl("_copy_from_and_resize", &copy_from_and_resize);
	m.impl("fill_.Scalar", &fill_scalar);
	m.impl("zero_", &zero);
	m.impl("resize_", &resize);
	m.impl("cat", &cat);
	m.impl("index_select", &index_select);
}

} // namespace torch_spyre
