#pragma once
// Calls of the older ops of backend.h (op_checks.h; the transformer ops' are transformer_contract.h)
// that break their argument contract, each with a phrase its refusal must hold. tests/unit/test_op_checks
// runs them on the CPU backend and on a backend of another device. Every call is refused before an op
// reads its data, so unwritten tensors of any backend will do.
#include <string>
#include <vector>

#include "transformer_contract.h"

namespace hrtest {

inline std::vector<ContractCase> op_contract_cases() {
    using hr::DType;
    using hr::Tensor;
    using B = hr::Backend;
    std::vector<ContractCase> c;
    auto add = [&](std::string name, std::string phrase, std::function<void(B&)> call, bool same_text = true) {
        c.push_back({std::move(name), std::move(phrase), std::move(call), same_text});
    };
    add("fill undefined", "fill: tensor is undefined", [](B& be) {
        Tensor t;
        be.fill(t, 1.0);
    });
    add("copy sizes", "copy: src", [](B& be) {
        Tensor a = blank(be, {4}), b = blank(be, {5});
        be.copy(a, b);
    });
    add("copy_from_host null", "copy_from_host: source pointer is null", [](B& be) {
        Tensor d = blank(be, {4});
        be.copy_from_host(nullptr, d);
    });
    add("copy_to_host null", "copy_to_host: destination pointer is null", [](B& be) {
        Tensor s = blank(be, {4});
        be.copy_to_host(s, nullptr);
    });
    add("add shapes", "add: a", [](B& be) {
        Tensor a = blank(be, {2, 3}), b = blank(be, {3, 2}), o = blank(be, {2, 3});
        be.add(a, b, o);
    });
    add("axpy sizes", "must have the same number of elements", [](B& be) {
        Tensor x = blank(be, {4}), y = blank(be, {3});
        be.axpy(1.0f, x, y);
    });
    add("scale integers", "must be a float tensor", [](B& be) {
        Tensor x = blank(be, {4}, DType::i32);
        be.scale(x, 2.0f);
    }, false);
    add("gemm shapes", "gemm: shapes do not match", [](B& be) {
        Tensor a = blank(be, {2, 3}), b = blank(be, {4, 5}), o = blank(be, {2, 5});
        be.gemm(false, false, 1.0f, a, b, 0.0f, o);
    });
    add("add_bias width", "add_bias: bias", [](B& be) {
        Tensor y = blank(be, {2, 3, 4}), bias = blank(be, {4});
        be.add_bias(y, bias);
    });
    add("bias_grad width", "bias_grad: dbias", [](B& be) {
        Tensor dy = blank(be, {2, 3, 4}), db = blank(be, {2});
        be.bias_grad(dy, db);
    });
    add("conv workspace stride", "conv2d_workspace_bytes: invalid parameters", [](B& be) {
        hr::Conv2dParams p;
        p.stride_h = 0;
        (void)be.conv2d_workspace_bytes({1, 1, 4, 4}, {1, 1, 3, 3}, {1, 1, 2, 2}, p, DType::f32);
    });
    add("conv forward y", "conv2d_forward: for x", [](B& be) {
        Tensor x = blank(be, {1, 2, 5, 5}), w = blank(be, {3, 2, 3, 3}), y = blank(be, {1, 3, 4, 4}), ws, none;
        be.conv2d_forward(x, w, none, y, {}, ws);
    });
    add("conv forward bias", "conv2d_forward: bias", [](B& be) {
        Tensor x = blank(be, {1, 2, 5, 5}), w = blank(be, {3, 2, 3, 3}), y = blank(be, {1, 3, 3, 3}), ws;
        Tensor bias = blank(be, {2});
        be.conv2d_forward(x, w, bias, y, {}, ws);
    });
    add("conv backward data channels", "conv2d_backward_data: w", [](B& be) {
        Tensor dy = blank(be, {1, 3, 3, 3}), w = blank(be, {3, 4, 3, 3}), dx = blank(be, {1, 2, 5, 5}), ws;
        be.conv2d_backward_data(dy, w, dx, {}, ws);
    });
    add("conv backward filter dbias", "conv2d_backward_filter: dbias", [](B& be) {
        Tensor x = blank(be, {1, 2, 5, 5}), dy = blank(be, {1, 3, 3, 3}), dw = blank(be, {3, 2, 3, 3}), ws;
        Tensor db = blank(be, {4});
        be.conv2d_backward_filter(x, dy, dw, db, {}, ws);
    });
    add("conv backward dtypes", "conv2d_backward: dy", [](B& be) {
        Tensor x = blank(be, {1, 2, 5, 5}), dy = blank(be, {1, 3, 3, 3}, DType::bf16), w = blank(be, {3, 2, 3, 3});
        Tensor dx = blank(be, {1, 2, 5, 5}), dw = blank(be, {3, 2, 3, 3}), ws, none;
        be.conv2d_backward(x, dy, w, dx, dw, none, {}, ws);
    });
    add("maxpool indices dtype", "maxpool2d_forward: indices", [](B& be) {
        Tensor x = blank(be, {1, 1, 4, 4}), y = blank(be, {1, 1, 2, 2}), i = blank(be, {1, 1, 2, 2}, DType::i64);
        be.maxpool2d_forward(x, y, i, {});
    });
    add("maxpool backward planes", "maxpool2d_backward: expects dy (N, C, Ho, Wo)", [](B& be) {
        Tensor dy = blank(be, {1, 1, 2, 2}), i = blank(be, {1, 1, 2, 2}, DType::i32), dx = blank(be, {1, 2, 4, 4});
        be.maxpool2d_backward(dy, i, dx);
    });
    add("maxpool backward windows", "maxpool2d_backward: for x", [](B& be) {
        Tensor dy = blank(be, {1, 1, 3, 3}), i = blank(be, {1, 1, 3, 3}, DType::i32), dx = blank(be, {1, 1, 4, 4});
        be.maxpool2d_backward_windows(dy, i, dx, {});
    });
    add("avgpool y", "avgpool2d_forward: for x", [](B& be) {
        Tensor x = blank(be, {1, 1, 4, 4}), y = blank(be, {1, 1, 3, 3});
        be.avgpool2d_forward(x, y, {});
    });
    add("avgpool backward kernel", "avgpool2d_backward: invalid pooling parameters", [](B& be) {
        Tensor dy = blank(be, {1, 1, 2, 2}), dx = blank(be, {1, 1, 4, 4});
        hr::Pool2dParams p;
        p.kernel_h = 0;
        be.avgpool2d_backward(dy, dx, p);
    });
    add("activation shapes", "activation_forward: x", [](B& be) {
        Tensor x = blank(be, {4}), y = blank(be, {5});
        be.activation_forward(hr::ActivationKind::relu, 0.0f, x, y);
    });
    add("gelu backward without x", "activation_backward: this activation's backward needs the forward input x",
        [](B& be) {
            Tensor y = blank(be, {4}), dy = blank(be, {4}), dx = blank(be, {4});
            be.activation_backward(hr::ActivationKind::gelu, 0.0f, Tensor(), y, dy, dx);
        });
    add("dropout probability", "dropout_forward: probability p", [](B& be) {
        Tensor x = blank(be, {4}), y = blank(be, {4}), m = blank(be, {4}, DType::u8);
        be.dropout_forward(x, y, m, 1.5f, 1, 0);
    });
    add("dropout backward mask", "dropout_backward: mask", [](B& be) {
        Tensor dy = blank(be, {4}), m = blank(be, {3}, DType::u8), dx = blank(be, {4});
        be.dropout_backward(dy, m, 0.5f, dx);
    });
    add("batchnorm one value", "batchnorm_forward_train: needs more than one value per channel", [](B& be) {
        Tensor x = blank(be, {1, 3}), y = blank(be, {1, 3}), sm = blank(be, {3}), si = blank(be, {3});
        Tensor none;
        be.batchnorm_forward_train(x, none, none, y, sm, si, none, none, 0.1f, 1e-5f);
    });
    add("batchnorm infer running", "batchnorm_forward_infer: running_mean is undefined", [](B& be) {
        Tensor x = blank(be, {2, 3}), y = blank(be, {2, 3}), rv = blank(be, {3}), none;
        be.batchnorm_forward_infer(x, none, none, none, rv, 1e-5f, y);
    });
    add("batchnorm recompute save_mean", "batchnorm_forward_recompute: save_mean", [](B& be) {
        Tensor x = blank(be, {2, 3, 2, 2}), y = blank(be, {2, 3, 2, 2}), sm = blank(be, {2}), si = blank(be, {3});
        Tensor none;
        be.batchnorm_forward_recompute(x, none, none, y, sm, si, none, none, 1e-5f);
    });
    add("batchnorm backward dgamma", "batchnorm_backward: dgamma", [](B& be) {
        Tensor x = blank(be, {2, 3}), dy = blank(be, {2, 3}), dx = blank(be, {2, 3}), sm = blank(be, {3});
        Tensor si = blank(be, {3}), dg = blank(be, {4}), none;
        be.batchnorm_backward(x, dy, none, sm, si, dx, dg, none);
    });
    add("cross-entropy labels dtype", "softmax_cross_entropy: labels", [](B& be) {
        Tensor l = blank(be, {2, 3}), y = blank(be, {2}, DType::i32), none;
        (void)be.softmax_cross_entropy(l, y, 0.0f, none, 1.0f);
    });
    add("mse shapes", "mse_loss: pred", [](B& be) {
        Tensor p = blank(be, {2, 3}), t = blank(be, {3, 2}), none;
        (void)be.mse_loss(p, t, none, 1.0f);
    });
    add("sum_squares integers", "must be a float tensor", [](B& be) {
        Tensor x = blank(be, {4}, DType::i64);
        (void)be.sum_squares(x);
    }, false);
    add("all_finite undefined", "all_finite: x is undefined", [](B& be) { (void)be.all_finite(Tensor()); });
    add("sgd low-precision param", "sgd_update: param", [](B& be) {
        Tensor p = blank(be, {4}, DType::bf16), g = blank(be, {4}, DType::bf16), none;
        be.sgd_update(p, g, none, {});
    });
    add("sgd nesterov", "sgd_update: nesterov momentum requires momentum > 0", [](B& be) {
        Tensor p = blank(be, {4}), g = blank(be, {4}), none;
        hr::SgdArgs a;
        a.nesterov = true;
        be.sgd_update(p, g, none, a);
    });
    add("adam step 0", "adam_update: step 0 must be >= 1", [](B& be) {
        Tensor p = blank(be, {4}), g = blank(be, {4}), m = blank(be, {4}), v = blank(be, {4});
        hr::AdamArgs a;
        a.step = 0;
        be.adam_update(p, g, m, v, a);
    });
    add("upload_async null", "upload_async: source pointer is null", [](B& be) {
        Tensor d = blank(be, {4});
        (void)be.upload_async(nullptr, d, nullptr);
    });
    add("copy_to_host_async null", "copy_to_host_async: destination pointer is null", [](B& be) {
        Tensor s = blank(be, {4});
        (void)be.copy_to_host_async(s, nullptr);
    });
    add("increment counter dtype", "increment: counter", [](B& be) {
        Tensor t = blank(be, {1}, DType::f32);
        be.increment(t, 1);
    });
    add("cross-entropy into stats dtype", "softmax_cross_entropy_into: stats", [](B& be) {
        Tensor l = blank(be, {2, 3}), y = blank(be, {2}, DType::i64), s = blank(be, {hr::kStepStatsFields}), none;
        be.softmax_cross_entropy_into(l, y, 0.0f, none, 1.0f, none, s, 1.0);
    });
    add("mse into stats size", "mse_loss_into: stats", [](B& be) {
        Tensor p = blank(be, {2, 3}), t = blank(be, {2, 3}), s = blank(be, {2}, DType::f64), none;
        be.mse_loss_into(p, t, none, 1.0f, none, s, 1.0);
    });
    add("all_finite_into control", "all_finite_into: control", [](B& be) {
        Tensor x = blank(be, {4}), ctl = blank(be, {hr::kStepControlFields});
        be.all_finite_into(x, ctl);
    });
    add("sgd_update_ctl without control", "sgd_update_ctl: control is undefined", [](B& be) {
        Tensor p = blank(be, {4}), g = blank(be, {4}), none;
        be.sgd_update_ctl(p, g, none, {}, none);
    });
    add("adam_update_ctl state dtype", "adam_update_ctl: v", [](B& be) {
        Tensor p = blank(be, {4}), g = blank(be, {4}), m = blank(be, {4}), v = blank(be, {4}, DType::bf16);
        Tensor ctl = blank(be, {hr::kStepControlFields}, DType::f64);
        be.adam_update_ctl(p, g, m, v, {}, ctl);
    });
    add("step_control_end size", "step_control_end: control", [](B& be) {
        Tensor ctl = blank(be, {3}, DType::f64);
        be.step_control_end(ctl, true, 100);
    });
    // the LLaMA family's ops and QLoRA's dequantize (transformer_checks.h)
    add("rmsnorm gamma width", "rmsnorm_forward: gamma", [](B& be) {
        Tensor x = blank(be, {3, 8}), g = blank(be, {7}), y = blank(be, {3, 8}), r = blank(be, {3});
        be.rmsnorm_forward(x, g, 1e-6f, y, r);
    });
    add("rmsnorm backward dgamma", "rmsnorm_backward: dgamma", [](B& be) {
        Tensor x = blank(be, {3, 8}), dy = blank(be, {3, 8}), g = blank(be, {8}), r = blank(be, {3});
        Tensor dx = blank(be, {3, 8}), dg = blank(be, {4});
        be.rmsnorm_backward(x, dy, g, r, dx, dg);
    });
    add("rope odd head", "rope_apply: expects x (B, T, heads * D) with an even head size D", [](B& be) {
        Tensor x = blank(be, {1, 2, 6});
        be.rope_apply(x, 2, {}, false);
    });
    add("swiglu shapes", "swiglu_forward: gate", [](B& be) {
        Tensor g = blank(be, {2, 4}), u = blank(be, {2, 3}), y = blank(be, {2, 4});
        be.swiglu_forward(g, u, y);
    });
    add("swiglu backward dy", "swiglu_backward: gate", [](B& be) {
        Tensor g = blank(be, {2, 4}), u = blank(be, {2, 4}), dy = blank(be, {2, 5});
        Tensor dg = blank(be, {2, 4}), du = blank(be, {2, 4});
        be.swiglu_backward(g, u, dy, dg, du);
    });
    add("dequantize bits", "dequantize: takes int8, int4 or nf4", [](B& be) {
        Tensor q = blank(be, {64}, DType::u8), w = blank(be, {4, 8});
        be.dequantize(q, 3, 64, w);
    });
    return c;
}

}  // namespace hrtest
