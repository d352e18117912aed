// SPDX-License-Identifier: MIT
/*
 * Tensors as the op library takes them (operand.cpp).  The op library
 * wants rows of whole 128-byte sticks at stick-aligned offsets
 * (spyre_ops.h, "Layout"); PyTorch's dense tensors are those bytes already
 * when their last dimension is a whole number of sticks, so an op uses them
 * in place; any other tensor (odd rows, views, broadcasts) is repacked on
 * the card into a padded one by a strided copy, and an output is written
 * back the same way.
 */
#pragma once

#include <ATen/ATen.h>

#include "runtime.h"

namespace torch_spyre {

/* The op library's element type for @t, or false (the op runs elsewhere). */
bool card_dtype(at::ScalarType t, spyre_dtype *out);

/* An op's operand: the op library's tensor and what its bytes live in
 * (the tensor itself or its padded copy, kept alive until the op is queued;
 * the allocator's reuse is ordered by the driver). */
struct operand {
	spyre_tensor t;
	at::Tensor storage;
};

/* @x (a spyre tensor of a card dtype, at most 4 dims, else taken as rows
 * of its last dim) as an input. */
operand input(const at::Tensor &x);
/* @x as rows of its last dimension: [rows, last]. */
operand input_rows(const at::Tensor &x);
/* A contiguous @x of @sticks whole sticks, as [sticks, stick]: the same
 * bytes whatever its shape (flat_ok says when). */
operand input_flat(const at::Tensor &x);
bool flat_ok(const at::Tensor &x);

/* Where an op writes @out: in place when its layout allows, else a padded
 * tensor that finish() copies into @out. */
struct output : operand {
	at::Tensor dst;
	void finish();
};
output output_for(const at::Tensor &out);
output output_rows(const at::Tensor &out);
output output_flat(const at::Tensor &out);

} // namespace torch_spyre
