// SPDX-License-Identifier: MIT
/*
 * Stick-layout operands (operand.h).
 */
#include "operand.h"

#include <vector>

#include "tensor.h"

namespace torch_spyre {

namespace {

enum class shape_as { own, rows, flat };

/* The op library's shape for @x: its own (1-4 dims; a scalar is [1]), rows
 * of its last dim, or whole sticks. */
std::vector<uint32_t> op_shape(const at::Tensor &x, shape_as how, uint32_t stick_elems)
{
	std::vector<int64_t> dims;

	if (how == shape_as::flat)
		dims = { x.numel() / stick_elems, stick_elems };
	else if (x.dim() == 0)
		dims = { 1 };
	else if (how == shape_as::own && x.dim() <= SPYRE_TENSOR_MAX_DIMS)
		dims = x.sizes().vec();
	else
		dims = { x.numel() / x.size(-1), x.size(-1) };
	std::vector<uint32_t> shape;

	for (int64_t d : dims) {
		TORCH_CHECK_VALUE(d > 0 && d <= UINT32_MAX, "spyre ops take dimensions of 1 to ",
				  UINT32_MAX, " elements, not ", d, " (shape ", x.sizes(), ")");
		shape.push_back(static_cast<uint32_t>(d));
	}
	return shape;
}

spyre_layout layout_of(const at::Tensor &x, shape_as how)
{
	spyre_dtype dt;

	TORCH_CHECK(card_dtype(x.scalar_type(), &dt), "spyre ops take float16, bfloat16 or float32, not ",
		    x.scalar_type());
	spyre_layout l;
	std::vector<uint32_t> shape = op_shape(x, how, SPYRE_STICK_BYTES / x.element_size());

	check(spyre_tensor_layout(dt, static_cast<uint32_t>(shape.size()), shape.data(), &l),
	      "laying out a spyre tensor of shape " + c10::str(x.sizes()));
	return l;
}

/* @x's own bytes are the op library's layout. */
bool in_place(const at::Tensor &x, shape_as how)
{
	uint64_t elem = x.element_size();

	if (!x.is_contiguous() || x.storage_offset() * elem % SPYRE_STICK_BYTES)
		return false;
	if (how == shape_as::flat)
		return x.numel() * elem % SPYRE_STICK_BYTES == 0;
	return x.dim() > 0 && x.size(-1) * elem % SPYRE_STICK_BYTES == 0;
}

spyre_tensor tensor_at(const at::Tensor &bytes, const spyre_layout &l)
{
	buffer_ref r = ref_of(bytes);
	spyre_tensor t;

	/* Blocks start 512-byte aligned (allocator.cpp), tensors at multiples of
	 * 128 bytes here, so this fails only on a broken invariant. */
	check(spyre_tensor_init(&t, r.buf, r.offset, &l), "placing a spyre op's operand");
	return t;
}

/* A padded tensor holding @x's elements: @x's dims, the last one padded. */
at::Tensor padded_like(const at::Tensor &x, const spyre_layout &l)
{
	std::vector<int64_t> dims = x.dim() ? x.sizes().vec() : std::vector<int64_t>{ 1 };

	dims.back() = l.padded_last;
	return at::empty(dims, x.options().memory_format(at::MemoryFormat::Contiguous));
}

operand make_input(const at::Tensor &x, shape_as how)
{
	spyre_layout l = layout_of(x, how);

	if (in_place(x, how))
		return { tensor_at(x, l), x };
	at::Tensor p = padded_like(x, l);

	card_copy(p.narrow(-1, 0, x.dim() ? x.size(-1) : 1), x.dim() ? x : x.reshape({ 1 }));
	return { tensor_at(p, l), p };
}

output make_output(const at::Tensor &out, shape_as how)
{
	spyre_layout l = layout_of(out, how);

	if (in_place(out, how))
		return { { tensor_at(out, l), out }, at::Tensor() };
	at::Tensor p = padded_like(out, l);

	return { { tensor_at(p, l), p }, out };
}

} // namespace

bool card_dtype(at::ScalarType t, spyre_dtype *out)
{
	switch (t) {
	case at::kHalf:
		*out = SPYRE_DTYPE_FP16;
		return true;
	case at::kBFloat16:
		*out = SPYRE_DTYPE_BF16;
		return true;
	case at::kFloat:
		*out = SPYRE_DTYPE_FP32;
		return true;
	default:
		return false;
	}
}

bool flat_ok(const at::Tensor &x)
{
	return in_place(x, shape_as::flat);
}

operand input(const at::Tensor &x)
{
	return make_input(x, shape_as::own);
}

operand input_rows(const at::Tensor &x)
{
	return make_input(x, shape_as::rows);
}

operand input_flat(const at::Tensor &x)
{
	TORCH_INTERNAL_ASSERT(flat_ok(x));
	return make_input(x, shape_as::flat);
}

output output_for(const at::Tensor &out)
{
	return make_output(out, shape_as::own);
}

output output_rows(const at::Tensor &out)
{
	return make_output(out, shape_as::rows);
}

output output_flat(const at::Tensor &out)
{
	TORCH_INTERNAL_ASSERT(flat_ok(out));
	return make_output(out, shape_as::flat);
}

void output::finish()
{
	if (!dst.defined())
		return;
	card_copy(dst, storage.narrow(-1, 0, dst.dim() ? dst.size(-1) : 1).view(dst.sizes()));
}

} // namespace torch_spyre
