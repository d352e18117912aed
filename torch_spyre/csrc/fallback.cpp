// SPDX-License-Identifier: MIT
/*
 * The CPU fallback (fallback.h), on PyTorch's own at::native::cpu_fallback,
 * which copies tensors out and results back through the copy kernels of
 * tensor.cpp.
 */
#include "fallback.h"

#include <mutex>
#include <set>

#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include "runtime.h"

namespace torch_spyre {

namespace {

std::mutex warned_lock;
std::set<std::string> warned;

void warn_once(const std::string &name)
{
	{
		std::lock_guard<std::mutex> g(warned_lock);

		if (!warned.insert(name).second)
			return;
	}
	TORCH_WARN("spyre: ", name, " has no card kernel for these arguments and runs on the CPU ",
		   "(its tensors are copied there and back); docs/torch.md lists the card's ops");
}

void check_tensor(const std::string &op, const at::Tensor &t, std::optional<c10::Device> &card,
		  bool &cpu_seen)
{
	if (!t.defined())
		return;
	if (t.device().type() == kSpyre) {
		TORCH_CHECK(!card || *card == t.device(), op,
			    ": expected all tensors to be on the same device, but found at least two "
			    "devices, ", *card, " and ", t.device(), "!");
		card = t.device();
	} else if (t.dim() > 0) {
		cpu_seen = true;
	}
	TORCH_CHECK(!(card && cpu_seen), op, ": expected all tensors to be on the same device, "
		    "but found at least two devices, ", *card, " and cpu!");
}

} // namespace

void check_devices(const std::string &op, const torch::jit::Stack &stack, size_t first, size_t n)
{
	std::optional<c10::Device> card;
	bool cpu_seen = false;

	for (size_t i = first; i < first + n; i++) {
		const c10::IValue &v = stack[i];

		if (v.isTensor()) {
			check_tensor(op, v.toTensor(), card, cpu_seen);
		} else if (v.isTensorList()) {
			for (const at::Tensor &t : v.toTensorList().vec())
				check_tensor(op, t, card, cpu_seen);
		} else if (v.isOptionalTensorList()) {
			for (const std::optional<at::Tensor> &t : v.toOptionalTensorList().vec())
				if (t)
					check_tensor(op, *t, card, cpu_seen);
		}
	}
}

void cpu_fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack)
{
	const c10::FunctionSchema &schema = op.schema();
	std::string name = c10::toString(schema.operator_name());
	size_t n = schema.arguments().size();

	check_devices(name, *stack, stack->size() - n, n);
	warn_once(name);
	at::native::cpu_fallback(op, stack);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m)
{
	m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

} // namespace torch_spyre
