// SPDX-License-Identifier: MIT
/*
 * Compute on the card through libspyre's op library (ops.cpp): the aten
 * kernels registered for spyre, and what tensor.cpp's copies use.
 */
#pragma once

#include <ATen/ATen.h>

namespace torch_spyre {

/* dst = src converted to dst's dtype on the card (same card, same shape),
 * as the op library's dtype-converting copy; false (nothing done) when one
 * of the dtypes is not the card's (float16, bfloat16, float32). */
bool convert_on_card(const at::Tensor &dst, const at::Tensor &src);

} // namespace torch_spyre
