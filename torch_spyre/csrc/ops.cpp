// SPDX-License-Identifier: MIT
/*
 * aten ops on the card (ops.h): matmuls, elementwise arithmetic and
 * activations, softmax, norms and attention through libspyre's op library
 * on the current stream, float16/bfloat16/float32.  A case the op library
 * does not take (another dtype, a softmax over another dimension, a tanh
 * GELU) runs on the CPU through fallback.h, warning once.
 *
 * Composite ops that PyTorch would decompose into CPU-bound pieces
 * (layer_norm's native_layer_norm needs its statistics, rms_norm and
 * scaled_dot_product_attention their reductions) are registered for
 * AutogradPrivateUse1 too: without gradients they run on the card whole;
 * with them, PyTorch's own decomposition runs so autograd sees its pieces.
 */
#include "ops.h"

#include <cmath>

#include <ATen/ExpandUtils.h>
#include <ATen/ScalarOps.h>
#include <ATen/ops/layer_norm_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/rms_norm_compositeimplicitautograd_dispatch.h>
#include <ATen/ops/scaled_dot_product_attention_compositeimplicitautograd_dispatch.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "fallback.h"
#include "operand.h"
#include "runtime.h"
#include "tensor.h"

namespace torch_spyre {

namespace {

bool on_card(const at::Tensor &t)
{
	return t.defined() && t.device().type() == kSpyre;
}

bool card_type(const at::Tensor &t)
{
	spyre_dtype d;

	return card_dtype(t.scalar_type(), &d);
}

/* A CPU 0-dim tensor (a Python number) used with spyre tensors. */
bool is_scalar(const at::Tensor &t)
{
	return t.defined() && t.device().is_cpu() && t.dim() == 0;
}

void same_card(const char *op, std::initializer_list<at::Tensor> ts)
{
	torch::jit::Stack stack(ts.begin(), ts.end());

	check_devices(op, stack, 0, stack.size());
}

spyre_stream *stream_for(const at::Tensor &t)
{
	return current_spyre_stream(t.device().index());
}

std::string where(const char *op, const at::Tensor &t)
{
	return std::string(op) + " on spyre:" + std::to_string(t.device().index());
}

/* A one-row spyre tensor of @n elements, all @value. */
at::Tensor filled_row(const at::Tensor &like, int64_t n, double value)
{
	at::Tensor row = at::empty({ n }, like.options());

	row.fill_(value);
	return row;
}

/* ---- elementwise ---- */

at::Tensor unary_into(const char *op, spyre_eltwise kind, const at::Tensor &x, float scale,
		      at::Tensor out)
{
	c10::DeviceGuard g(x.device());
	bool flat = flat_ok(x) && flat_ok(out);
	operand a = flat ? input_flat(x) : input_rows(x);
	output o = flat ? output_flat(out) : output_rows(out);

	check(spyre_op_unary(stream_for(x), kind, &a.t, scale, &o.t), where(op, x));
	o.finish();
	return out;
}

at::Tensor unary(const char *op, spyre_eltwise kind, const at::Tensor &x, float scale = 1.0f)
{
	return unary_into(op, kind, x, scale, at::empty(x.sizes(), x.options()));
}

at::Tensor scaled(const at::Tensor &x, double s)
{
	return s == 1.0 ? x : unary("mul", SPYRE_OP_SCALE, x, static_cast<float>(s));
}

/* out = x op y on the card, both spyre tensors of one card dtype; y
 * broadcast as one row when it is one, else both expanded to the result. */
at::Tensor binary_card(const char *op, spyre_eltwise kind, at::Tensor x, at::Tensor y)
{
	c10::DeviceGuard g(x.device());
	std::vector<int64_t> shape = at::infer_size(x.sizes(), y.sizes());
	at::Tensor out = at::empty(shape, x.options());
	int64_t last = shape.empty() ? 1 : shape.back();
	bool commutes = kind != SPYRE_OP_SUB;

	if (commutes && y.sizes().vec() == shape && x.sizes().vec() != shape)
		std::swap(x, y);
	bool row = x.sizes().vec() == shape && y.numel() == last && y.dim() > 0 &&
		   y.size(-1) == last && y.numel() != x.numel();

	if (!row) {
		x = x.expand(shape);
		y = y.expand(shape);
	}
	bool flat = !row && flat_ok(x) && flat_ok(y) && flat_ok(out);
	operand a = flat ? input_flat(x) : input_rows(x);
	operand b = flat ? input_flat(y) : row ? input_rows(y.reshape({ last })) : input_rows(y);
	output o = flat ? output_flat(out) : output_rows(out);

	check(spyre_op_binary(stream_for(x), kind, &a.t, &b.t, &o.t), where(op, x));
	o.finish();
	return out;
}

/* The result dtype of x op y, or false when the card cannot compute it. */
bool card_result(const at::Tensor &x, const at::Tensor &y, at::ScalarType *type)
{
	*type = at::result_type(x, y);
	spyre_dtype d;

	return card_dtype(*type, &d) && (on_card(x) || is_scalar(x)) && (on_card(y) || is_scalar(y)) &&
	       (on_card(x) || on_card(y));
}

at::Tensor to_type(const at::Tensor &t, at::ScalarType type)
{
	return t.scalar_type() == type ? t : t.to(type);
}

at::Tensor add_op(const at::Tensor &x, const at::Tensor &y, const at::Scalar &alpha)
{
	same_card("aten::add.Tensor", { x, y });
	at::ScalarType type;

	if (!card_result(x, y, &type) || alpha.isComplex())
		return on_cpu<at::Tensor>("aten::add", "Tensor", x, y, alpha);
	double a = alpha.toDouble();

	if (is_scalar(y)) {
		at::Tensor xt = to_type(x, type);

		return binary_card("add", SPYRE_OP_ADD, xt,
				   filled_row(xt, xt.dim() ? xt.size(-1) : 1, a * y.item<double>()));
	}
	if (is_scalar(x)) {
		at::Tensor yt = scaled(to_type(y, type), a);

		return binary_card("add", SPYRE_OP_ADD, yt,
				   filled_row(yt, yt.dim() ? yt.size(-1) : 1, x.item<double>()));
	}
	return binary_card("add", SPYRE_OP_ADD, to_type(x, type), scaled(to_type(y, type), a));
}

at::Tensor sub_op(const at::Tensor &x, const at::Tensor &y, const at::Scalar &alpha)
{
	same_card("aten::sub.Tensor", { x, y });
	at::ScalarType type;

	if (!card_result(x, y, &type) || alpha.isComplex() || is_scalar(x))
		return on_cpu<at::Tensor>("aten::sub", "Tensor", x, y, alpha);
	return add_op(x, y, -alpha.toDouble());
}

at::Tensor mul_op(const at::Tensor &x, const at::Tensor &y)
{
	same_card("aten::mul.Tensor", { x, y });
	at::ScalarType type;

	if (!card_result(x, y, &type))
		return on_cpu<at::Tensor>("aten::mul", "Tensor", x, y);
	if (is_scalar(y) || is_scalar(x)) {
		const at::Tensor &t = is_scalar(y) ? x : y;

		return unary("mul", SPYRE_OP_SCALE, to_type(t, type),
			     static_cast<float>((is_scalar(y) ? y : x).item<double>()));
	}
	return binary_card("mul", SPYRE_OP_MUL, to_type(x, type), to_type(y, type));
}

at::Tensor div_op(const at::Tensor &x, const at::Tensor &y)
{
	same_card("aten::div.Tensor", { x, y });
	at::ScalarType type;

	/* Division by a tensor has no card op; by a number it is a scale. */
	if (!card_result(x, y, &type) || !is_scalar(y) || !on_card(x))
		return on_cpu<at::Tensor>("aten::div", "Tensor", x, y);
	double d = y.item<double>();

	if (d == 0.0 || !std::isfinite(1.0 / d))
		return on_cpu<at::Tensor>("aten::div", "Tensor", x, y);
	return unary("div", SPYRE_OP_SCALE, to_type(x, type), static_cast<float>(1.0 / d));
}

/* A Python number as PyTorch passes it to the Tensor overloads: a wrapped
 * 0-dim CPU tensor, which type promotion does not widen to. */
at::Tensor number(const at::Scalar &s)
{
	at::Tensor t = c10::scalar_to_tensor(s);

	t.unsafeGetTensorImpl()->set_wrapped_number(true);
	return t;
}

at::Tensor add_scalar_op(const at::Tensor &x, const at::Scalar &y, const at::Scalar &alpha)
{
	return add_op(x, number(y), alpha);
}

at::Tensor sub_scalar_op(const at::Tensor &x, const at::Scalar &y, const at::Scalar &alpha)
{
	return sub_op(x, number(y), alpha);
}

at::Tensor mul_scalar_op(const at::Tensor &x, const at::Scalar &y)
{
	return mul_op(x, number(y));
}

at::Tensor div_scalar_op(const at::Tensor &x, const at::Scalar &y)
{
	return div_op(x, number(y));
}

at::Tensor neg_op(const at::Tensor &x)
{
	if (!card_type(x))
		return on_cpu<at::Tensor>("aten::neg", "", x);
	return unary("neg", SPYRE_OP_SCALE, x, -1.0f);
}

at::Tensor relu_op(const at::Tensor &x)
{
	if (!card_type(x))
		return on_cpu<at::Tensor>("aten::relu", "", x);
	return unary("relu", SPYRE_OP_RELU, x);
}

at::Tensor silu_op(const at::Tensor &x)
{
	if (!card_type(x))
		return on_cpu<at::Tensor>("aten::silu", "", x);
	return unary("silu", SPYRE_OP_SILU, x);
}

at::Tensor gelu_op(const at::Tensor &x, c10::string_view approximate)
{
	/* The card's GELU is the erf form. */
	if (!card_type(x) || approximate != "none")
		return on_cpu<at::Tensor>("aten::gelu", "", x, approximate);
	return unary("gelu", SPYRE_OP_GELU, x);
}

/* ---- matmuls ---- */

/* @b [.., K, N] as the op library's right-hand operand(s): a contiguous
 * b in place or packed; the transpose of a contiguous tensor (a Linear's
 * weight.t(), k.transpose(-1, -2)) transposed on the card. */
operand rhs(const at::Tensor &b)
{
	at::Tensor bt = b.transpose(-1, -2);

	if (b.is_contiguous() || !bt.is_contiguous() || b.dim() > SPYRE_TENSOR_MAX_DIMS)
		return input(b);
	operand src = input(bt);
	at::Tensor t = at::empty(b.sizes(), b.options());
	output o = output_for(t);

	check(spyre_op_transpose(stream_for(b), &src.t, &o.t), where("transpose", b));
	o.finish();
	return input(t);
}

bool card_matmul(const at::Tensor &a, const at::Tensor &b)
{
	return on_card(a) && on_card(b) && card_type(a) && a.scalar_type() == b.scalar_type();
}

/* c = a @ b for a [M, K], b [K, N]: one op. */
at::Tensor mm_card(const at::Tensor &a, const at::Tensor &b)
{
	c10::DeviceGuard g(a.device());
	at::Tensor c = at::empty({ a.size(0), b.size(1) }, a.options());

	if (!c.numel())
		return c;
	if (!a.size(1))
		return c.zero_();
	operand x = input(a), w = rhs(b);
	output o = output_for(c);

	check(spyre_op_matmul(stream_for(a), &x.t, &w.t, SPYRE_ACT_NONE, &o.t), where("mm", a));
	o.finish();
	return c;
}

at::Tensor mm_op(const at::Tensor &a, const at::Tensor &b)
{
	same_card("aten::mm", { a, b });
	if (!card_matmul(a, b))
		return on_cpu<at::Tensor>("aten::mm", "", a, b);
	TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0),
		    "mm: mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x", a.size(1),
		    " and ", b.size(0), "x", b.size(1), ")");
	return mm_card(a, b);
}

at::Tensor addmm_op(const at::Tensor &bias, const at::Tensor &a, const at::Tensor &b,
		 const at::Scalar &beta, const at::Scalar &alpha)
{
	same_card("aten::addmm", { bias, a, b });
	if (!card_matmul(a, b) || !on_card(bias) || bias.scalar_type() != a.scalar_type())
		return on_cpu<at::Tensor>("aten::addmm", "", bias, a, b, beta, alpha);
	at::Tensor c = scaled(mm_op(a, b), alpha.toDouble());
	double bt = beta.toDouble();

	if (bt == 0.0)
		return c;
	return binary_card("addmm", SPYRE_OP_ADD, c, scaled(bias, bt));
}

at::Tensor bmm_op(const at::Tensor &a, const at::Tensor &b)
{
	same_card("aten::bmm", { a, b });
	if (!card_matmul(a, b))
		return on_cpu<at::Tensor>("aten::bmm", "", a, b);
	TORCH_CHECK(a.dim() == 3 && b.dim() == 3 && a.size(0) == b.size(0) && a.size(2) == b.size(1),
		    "bmm: batch1 and batch2 shapes cannot be multiplied (", a.sizes(), " and ",
		    b.sizes(), ")");
	c10::DeviceGuard g(a.device());
	at::Tensor c = at::empty({ a.size(0), a.size(1), b.size(2) }, a.options());

	if (!c.numel())
		return c;
	if (!a.size(2))
		return c.zero_();
	operand x = input(a), w = rhs(b);
	output o = output_for(c);
	spyre_stream *s = stream_for(a);

	/* One matmul per batch entry, on slices of the packed operands: each
	 * entry's rows start on a stick boundary. */
	for (int64_t i = 0; i < a.size(0); i++) {
		spyre_tensor xi = x.t, wi = w.t, ci = o.t;
		uint32_t m = static_cast<uint32_t>(a.size(1)), k = static_cast<uint32_t>(a.size(2));
		uint32_t n = static_cast<uint32_t>(b.size(2));

		xi.offset += static_cast<uint64_t>(i) * x.t.layout.strides[0];
		wi.offset += static_cast<uint64_t>(i) * w.t.layout.strides[0];
		ci.offset += static_cast<uint64_t>(i) * o.t.layout.strides[0];
		check(spyre_tensor_layout(x.t.layout.dtype, 2, std::array<uint32_t, 2>{ m, k }.data(),
					  &xi.layout), "bmm");
		check(spyre_tensor_layout(w.t.layout.dtype, 2, std::array<uint32_t, 2>{ k, n }.data(),
					  &wi.layout), "bmm");
		check(spyre_tensor_layout(o.t.layout.dtype, 2, std::array<uint32_t, 2>{ m, n }.data(),
					  &ci.layout), "bmm");
		check(spyre_op_matmul(s, &xi, &wi, SPYRE_ACT_NONE, &ci), where("bmm", a));
	}
	o.finish();
	return c;
}

/* ---- softmax and norms ---- */

bool last_dim(const at::Tensor &x, int64_t dim)
{
	return x.dim() == 0 || c10::maybe_wrap_dim(dim, x.dim()) == x.dim() - 1;
}

/* softmax or log_softmax over the last dimension. */
at::Tensor softmax_card(const char *op, bool log, const at::Tensor &x, bool half_to_float)
{
	c10::DeviceGuard g(x.device());
	at::Tensor y = at::empty(x.sizes(), x.options().dtype(half_to_float ? at::kFloat :
								   x.scalar_type()));
	operand a = input_rows(x);
	output o = output_rows(y);

	check((log ? spyre_op_log_softmax : spyre_op_softmax)(stream_for(x), &a.t, &o.t),
	      where(op, x));
	o.finish();
	return y;
}

at::Tensor softmax_op(const at::Tensor &x, int64_t dim, bool half_to_float)
{
	if (!card_type(x) || !last_dim(x, dim) || !x.numel())
		return on_cpu<at::Tensor>("aten::_softmax", "", x, dim, half_to_float);
	return softmax_card("softmax", false, x, half_to_float);
}

at::Tensor log_softmax_op(const at::Tensor &x, int64_t dim, bool half_to_float)
{
	if (!card_type(x) || !last_dim(x, dim) || !x.numel())
		return on_cpu<at::Tensor>("aten::_log_softmax", "", x, dim, half_to_float);
	return softmax_card("log_softmax", true, x, half_to_float);
}

/* Whether a composite op must decompose instead: gradients are wanted
 * (autograd sees the pieces), or a tensor is a tracing one (dynamo's fake
 * tensors, a Python subclass: no card memory behind it). */
bool decompose(std::initializer_list<at::Tensor> ts)
{
	bool grad = at::GradMode::is_enabled();

	for (const at::Tensor &t : ts) {
		if (!t.defined())
			continue;
		if ((grad && t.requires_grad()) || t.key_set().has(c10::DispatchKey::Python))
			return true;
	}
	return false;
}

/* A norm's weight or bias: one row of x's last dim in x's dtype, or none. */
bool norm_param_ok(const at::Tensor &x, const std::optional<at::Tensor> &p)
{
	return !p || !p->defined() ||
	       (on_card(*p) && p->scalar_type() == x.scalar_type() && p->numel() == x.size(-1));
}

at::Tensor layer_norm_op(const at::Tensor &x, c10::SymIntArrayRef shape,
		      const std::optional<at::Tensor> &weight, const std::optional<at::Tensor> &bias,
		      double eps, bool cudnn)
{
	at::Tensor w = weight.value_or(at::Tensor()), b = bias.value_or(at::Tensor());

	same_card("aten::layer_norm", { x, w, b });
	if (decompose({ x, w, b }) || !on_card(x) || !card_type(x) || shape.size() != 1 ||
	    x.dim() == 0 || !x.numel() || !norm_param_ok(x, weight) || !norm_param_ok(x, bias))
		return at::compositeimplicitautograd::layer_norm_symint(x, shape, weight, bias, eps, cudnn);
	c10::DeviceGuard g(x.device());
	at::Tensor y = at::empty(x.sizes(), x.options());
	operand a = input_rows(x);
	std::optional<operand> gw, gb;

	if (w.defined())
		gw = input_rows(w.reshape({ x.size(-1) }));
	if (b.defined())
		gb = input_rows(b.reshape({ x.size(-1) }));
	output o = output_rows(y);

	check(spyre_op_layernorm(stream_for(x), &a.t, gw ? &gw->t : nullptr, gb ? &gb->t : nullptr,
				 static_cast<float>(eps), &o.t), where("layer_norm", x));
	o.finish();
	return y;
}

at::Tensor rms_norm_op(const at::Tensor &x, c10::SymIntArrayRef shape,
		    const std::optional<at::Tensor> &weight, std::optional<double> eps)
{
	at::Tensor w = weight.value_or(at::Tensor());

	same_card("aten::rms_norm", { x, w });
	if (decompose({ x, w }) || !on_card(x) || !card_type(x) || shape.size() != 1 ||
	    x.dim() == 0 || !x.numel() || !norm_param_ok(x, weight))
		return at::compositeimplicitautograd::rms_norm_symint(x, shape, weight, eps);
	c10::DeviceGuard g(x.device());
	/* PyTorch's default epsilon: the dtype's machine epsilon. */
	double e = eps ? *eps : std::numeric_limits<float>::epsilon();
	if (!eps && x.scalar_type() == at::kHalf)
		e = 0.0009765625;
	else if (!eps && x.scalar_type() == at::kBFloat16)
		e = 0.0078125;
	at::Tensor y = at::empty(x.sizes(), x.options());
	operand a = input_rows(x);
	std::optional<operand> gw;

	if (w.defined())
		gw = input_rows(w.reshape({ x.size(-1) }));
	output o = output_rows(y);

	check(spyre_op_rmsnorm(stream_for(x), &a.t, gw ? &gw->t : nullptr, static_cast<float>(e),
			       &o.t), where("rms_norm", x));
	o.finish();
	return y;
}

/* ---- attention ---- */

/* softmax(q k^T * scale + mask) v over [B, H, L, E] / [B, Hkv, S, E];
 * grouped-query attention repeats each key/value head for H / Hkv query
 * heads; is_causal masks the upper triangle (top-left aligned, as PyTorch). */
at::Tensor sdpa_op(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v,
		const std::optional<at::Tensor> &mask, double dropout, bool causal,
		std::optional<double> scale, bool gqa)
{
	at::Tensor m = mask.value_or(at::Tensor());

	same_card("aten::scaled_dot_product_attention", { q, k, v, m });
	bool card = !decompose({ q, k, v, m }) && dropout == 0.0 && on_card(q) && card_type(q) &&
		    q.dim() == 4 && k.dim() == 4 && v.dim() == 4 &&
		    k.scalar_type() == q.scalar_type() && v.scalar_type() == q.scalar_type() &&
		    q.size(0) == k.size(0) && k.size(0) == v.size(0) && q.size(3) == k.size(3) &&
		    k.size(2) == v.size(2) && k.size(1) == v.size(1) &&
		    (q.size(1) == k.size(1) || (gqa && q.size(1) % k.size(1) == 0)) &&
		    (!m.defined() || (on_card(m) && m.scalar_type() == q.scalar_type())) &&
		    q.numel() && k.numel();

	if (!card)
		return at::compositeimplicitautograd::scaled_dot_product_attention(q, k, v, mask, dropout, causal, scale,
								gqa);
	c10::DeviceGuard g(q.device());
	int64_t B = q.size(0), H = q.size(1), L = q.size(2), E = q.size(3);
	int64_t Hkv = k.size(1), S = k.size(2), Ev = v.size(3), rep = H / Hkv;
	double sc = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(E));
	/* Key and value heads repeated for their query heads (a view, packed by bmm). */
	at::Tensor kk = k.unsqueeze(2).expand({ B, Hkv, rep, S, E }).reshape({ B * H, S, E });
	at::Tensor vv = v.unsqueeze(2).expand({ B, Hkv, rep, S, Ev }).reshape({ B * H, S, Ev });
	at::Tensor scores = bmm_op(q.reshape({ B * H, L, E }), kk.transpose(1, 2));

	scores = scaled(scores, sc).view({ B, H, L, S });
	if (causal) {
		at::Tensor tri = at::ones({ L, S }, at::kBool).tril();
		at::Tensor bias = at::zeros({ L, S }, q.options().device(at::kCPU))
					  .masked_fill(tri.logical_not(), -INFINITY)
					  .to(q.device());

		scores = binary_card("scaled_dot_product_attention", SPYRE_OP_ADD, scores, bias);
	}
	if (m.defined())
		scores = binary_card("scaled_dot_product_attention", SPYRE_OP_ADD, scores, m);
	at::Tensor p = softmax_card("scaled_dot_product_attention", false, scores, false);

	return bmm_op(p.view({ B * H, L, S }), vv).view({ B, H, L, Ev });
}

} // namespace

bool convert_on_card(const at::Tensor &dst, const at::Tensor &src)
{
	if (!card_type(dst) || !card_type(src))
		return false;
	unary_into("copy_", SPYRE_OP_COPY, src, 1.0f, dst);
	return true;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("add.Tensor", &add_op);
	m.impl("add.Scalar", &add_scalar_op);
	m.impl("sub.Tensor", &sub_op);
	m.impl("sub.Scalar", &sub_scalar_op);
	m.impl("mul.Tensor", &mul_op);
	m.impl("mul.Scalar", &mul_scalar_op);
	m.impl("div.Tensor", &div_op);
	m.impl("div.Scalar", &div_scalar_op);
	m.impl("neg", &neg_op);
	m.impl("relu", &relu_op);
	m.impl("silu", &silu_op);
	m.impl("gelu", &gelu_op);
	m.impl("mm", &mm_op);
	m.impl("addmm", &addmm_op);
	m.impl("bmm", &bmm_op);
	m.impl("_softmax", &softmax_op);
	m.impl("_log_softmax", &log_softmax_op);
	m.impl("layer_norm", &layer_norm_op);
	m.impl("rms_norm", &rms_norm_op);
	m.impl("scaled_dot_product_attention", &sdpa_op);
}

/* With autograd in the dispatch key set, the composite ops stop here first. */
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m)
{
	m.impl("layer_norm", &layer_norm_op);
	m.impl("rms_norm", &rms_norm_op);
	m.impl("scaled_dot_product_attention", &sdpa_op);
}

} // namespace torch_spyre
