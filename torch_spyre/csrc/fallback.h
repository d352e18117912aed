// SPDX-License-Identifier: MIT
/*
 * Ops the card does not run go to the CPU (fallback.cpp): their spyre
 * tensors are copied out, the CPU kernel runs, results and mutated inputs
 * are copied back, and PyTorch warns once per op, naming it.  Kernels of
 * ops.cpp that meet a case the card cannot take (an integer dtype, a
 * softmax over another dimension) call on_cpu() for the same path.
 */
#pragma once

#include <string>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

namespace torch_spyre {

/* The boxed CPU fallback (registered for every op without a spyre kernel). */
void cpu_fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack);

/* Throw unless every spyre tensor of the arguments is on one card and no
 * CPU tensor but a 0-dim one (a scalar) is mixed with them. */
void check_devices(const std::string &op, const torch::jit::Stack &stack, size_t first, size_t n);

/* Run aten::@name.@overload on the CPU with @args (the fallback's path). */
template <typename R, typename... Args>
R on_cpu(const char *name, const char *overload, const Args &...args)
{
	c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
	torch::jit::Stack stack;

	torch::jit::push(stack, args...);
	cpu_fallback(op, &stack);
	return torch::jit::pop(stack).to<R>();
}

} // namespace torch_spyre
