// SPDX-License-Identifier: MIT
/*
 * Element moves every op builds on (tensor.cpp): where a spyre tensor's
 * first element is, strided copies on the card, and host -> card copies.
 */
#pragma once

#include <ATen/ATen.h>

#include "allocator.h"

namespace torch_spyre {

/* The buffer and byte offset of a spyre tensor's first element. */
buffer_ref ref_of(const at::Tensor &t);

/* dst[i] = src[i] for same-shape, same-dtype spyre tensors on one card, in
 * the current stream's order; strides of any kind on both sides. */
void card_copy(const at::Tensor &dst, const at::Tensor &src);

/* CPU -> card: a dense CPU copy of @src in @dst's dtype, then DMA. */
void host_to_card(const at::Tensor &dst, const at::Tensor &src, bool non_blocking);

} // namespace torch_spyre
