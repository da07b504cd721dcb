<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>Cli</name>
    <message>
        <source>Headroom %1: train neural networks within your GPU&apos;s memory, and see why memory is what it is.

Usage:
  headroom                      open the workbench window
  headroom train [options]      train a model headless (see headroom train --help)
  headroom plan [options]       predict a run&apos;s memory by category and layer; --budget finds
                                the strategies that fit (see headroom plan --help)
  headroom presets              list the built-in models
  headroom devices              list the devices Headroom can train on
  headroom runs [options]       list the run history
  headroom report RUN [options] write a run&apos;s report (html, pdf, json, csv)
  headroom --version            print the version
  headroom --help               this help

Exit codes: 0 success, 1 failure, 2 bad input (a flag, file, model spec or dataset).
</source>
        <translation>Headroom %1：在 GPU 显存限制内训练神经网络，并了解显存占用的来龙去脉。

用法：
  headroom                      打开工作台窗口
  headroom train [选项]         无界面训练模型（见 headroom train --help）
  headroom plan [选项]          按类别和层预测一次运行的显存；--budget 找出能放下的
                                策略组合（见 headroom plan --help）
  headroom presets              列出内置模型
  headroom devices              列出 Headroom 可用于训练的设备
  headroom runs [选项]          列出运行记录
  headroom report RUN [选项]    导出一次运行的报告（html、pdf、json、csv）
  headroom --version            显示版本
  headroom --help               显示本帮助

退出码：0 成功，1 失败，2 输入错误（选项、文件、模型规格或数据集）。
</translation>
    </message>
    <message>
        <source>headroom: no display found, so the window cannot open.
Run headless instead, for example:
  headroom train --preset seed-cnn --data fashion-mnist --epochs 1 --out runs/demo
or start the window under a display (DISPLAY / WAYLAND_DISPLAY), e.g. with xvfb-run.
See headroom --help.
</source>
        <translation>headroom：未找到显示器，无法打开窗口。
请改为无界面运行，例如：
  headroom train --preset seed-cnn --data fashion-mnist --epochs 1 --out runs/demo
或在有显示器的环境（DISPLAY / WAYLAND_DISPLAY）下启动窗口，例如使用 xvfb-run。
见 headroom --help。
</translation>
    </message>
    <message>
        <source>headroom: unknown command &apos;%1&apos;; use train, plan, presets, devices, runs or report (see headroom --help)
</source>
        <translation>headroom：未知命令“%1”；请使用 train、plan、presets、devices、runs 或 report（见 headroom --help）
</translation>
    </message>
    <message>
        <source>Usage: headroom plan [options]

Predicts the memory of a training run before it starts: bytes per category (parameters, gradients,
optimizer state, master weights, activations, workspace, data) on the device and on the host, per
layer, and the step cost of the chosen strategies. With --budget it searches precision,
checkpointing, micro-batch/accumulation and optimizer offload for the configuration that fits
and is predicted fastest, and says why each other one ranks lower or does not fit.

  --preset NAME | --model FILE.json   the model (default seed-cnn)
  --batch N                 samples per optimizer step (default 64)
  --optimizer NAME          sgd (default), adam, adamw; --momentum F
  --precision P             fp32 (default), tf32, bf16, fp16
  --checkpoint C            none (default), all, every:K, list:I,J, auto
  --micro-batch N / --accumulate N    gradient accumulation
  --offload-optimizer       optimizer state and master weights in host memory
  --device DEV              cpu (default), auto
  --threads N               CPU threads (for workspace sizes)
  --data SPEC, --train-limit N, --test-limit N   size the data loader buffers like the run
  --budget SIZE|device      search for the best configuration within SIZE (4GiB, 512MiB, ...)
                            or the device&apos;s free memory
  --json                    machine-readable output
</source>
        <translation>用法：headroom plan [选项]

在训练开始前预测一次运行的显存：设备和主机上按类别（参数、梯度、优化器状态、主权重、
激活值、工作区、数据）和逐层的字节数，以及所选策略的单步耗时。使用 --budget 时，
会在混合精度、梯度检查点、微批次/梯度累积和优化器卸载中搜索能放下且预测最快的配置，
并说明其他每种配置排名靠后或放不下的原因。

  --preset NAME | --model FILE.json   模型（默认 seed-cnn）
  --batch N                 每个优化器步的样本数（默认 64）
  --optimizer NAME          sgd（默认）、adam、adamw；--momentum F
  --precision P             fp32（默认）、tf32、bf16、fp16
  --checkpoint C            none（默认）、all、every:K、list:I,J、auto
  --micro-batch N / --accumulate N    梯度累积
  --offload-optimizer       优化器状态和主权重放在主机内存中
  --device DEV              cpu（默认）、auto
  --threads N               CPU 线程数（用于计算工作区大小）
  --data SPEC, --train-limit N, --test-limit N   按该运行的方式确定数据加载缓冲区大小
  --budget SIZE|device      在 SIZE（4GiB、512MiB 等）或设备的可用显存内搜索最佳配置
  --json                    输出机器可读的 JSON
</translation>
    </message>
    <message>
        <source>category</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>predicted</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <source>difference</source>
        <translation>差值</translation>
    </message>
    <message>
        <source>host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>total</source>
        <translation>合计</translation>
    </message>
    <message>
        <source>headroom plan: %1
</source>
        <translation>headroom plan：%1
</translation>
    </message>
    <message>
        <source>Model %1, batch %2 (micro-batch %3 x %4), %5, device %6

</source>
        <translation>模型 %1，批大小 %2（微批次 %3 × %4），%5，设备 %6

</translation>
    </message>
    <message>
        <source>
  %1 of %2 free on %3: %4
</source>
        <translation>
  %3 上可用 %2，需要 %1：%4
</translation>
    </message>
    <message>
        <source>fits</source>
        <translation>放得下</translation>
    </message>
    <message>
        <source>does NOT fit</source>
        <translation>放不下</translation>
    </message>
    <message>
        <source>
Per layer (bytes kept for backward at micro-batch %1; * marks checkpointed blocks, whose inner tensors are recomputed in a shared %2 buffer):
</source>
        <translation>
逐层（微批次 %1 时为反向传播保留的字节数；* 标记做梯度检查点的块，其内部张量在共用的 %2 缓冲区中重计算）：
</translation>
    </message>
    <message>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>block</source>
        <translation>块</translation>
    </message>
    <message>
        <source>activations</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>
Peak: %1
Predicted step: %2 ms (%3x the fp32 step without strategies; %4 recomputed forward FLOPs, %5 host traffic)
</source>
        <translation>
峰值：%1
预测每步耗时：%2 毫秒（为不用策略的 fp32 单步的 %3 倍；重计算前向 %4 FLOPs，主机传输 %5）
</translation>
    </message>
    <message>
        <source>Configurations for %1 at batch %2 within %3 (fastest first; * marks the best):

</source>
        <translation>%1 在批大小 %2 下、%3 以内的配置（最快的在前；* 为最佳）：

</translation>
    </message>
    <message>
        <source>strategy</source>
        <translation>策略</translation>
    </message>
    <message>
        <source>device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>verdict</source>
        <translation>结论</translation>
    </message>
    <message>
        <source>(no strategies: fp32)</source>
        <translation>（无策略：fp32）</translation>
    </message>
    <message>
        <source>
Nothing fits in %1: lower --batch or use a smaller model.
</source>
        <translation>
%1 内没有可行配置：请减小 --batch 或换用更小的模型。
</translation>
    </message>
    <message>
        <source>
Best: headroom train --batch %1 %2
</source>
        <translation>
最佳：headroom train --batch %1 %2
</translation>
    </message>
    <message>
        <source>%1 expects an integer of at least %2, got &apos;%3&apos;</source>
        <translation>%1 需要不小于 %2 的整数，得到的是“%3”</translation>
    </message>
    <message>
        <source>%1 expects a number, got &apos;%2&apos;</source>
        <translation>%1 需要一个数字，得到的是“%2”</translation>
    </message>
    <message>
        <source>--memory-limit: %1</source>
        <translation>--memory-limit：%1</translation>
    </message>
    <message>
        <source>%1 needs a value (see headroom %2 --help)</source>
        <translation>%1 需要一个值（见 headroom %2 --help）</translation>
    </message>
    <message>
        <source>unknown option &apos;%1&apos; for &apos;headroom %2&apos;; see headroom %2 --help</source>
        <translation>“headroom %2”没有选项“%1”；见 headroom %2 --help</translation>
    </message>
    <message>
        <source>give either --preset or --model, not both</source>
        <translation>请只给出 --preset 或 --model 之一，不要同时给出</translation>
    </message>
    <message>
        <source>give either --epochs or --steps, not both</source>
        <translation>请只给出 --epochs 或 --steps 之一，不要同时给出</translation>
    </message>
    <message>
        <source>Usage: headroom train [options]

Trains a model headless and writes DIR/run.json (config, per-epoch metrics, final metrics, memory
ledger peaks per category; see docs/run-json.md) and DIR/model.safetensors (PyTorch state_dict names).
The last line printed is test_accuracy=0.xxxx.

Model (one of):
  --preset NAME             built-in model: seed-cnn (default), mlp, lenet5, resnet-mini
  --model FILE.json         a model spec (docs/model-spec.md)
Data:
  --data SPEC               fashion-mnist (default), mnist, idx:DIR, synthetic
  --train-limit N           use only the first N training samples (0: all)
  --test-limit N            use only the first N test samples (0: all)
Length:
  --epochs N                passes over the training set (default 1)
  --steps N                 train exactly N steps instead (evaluates at the end)
  --batch N                 samples per step (default 64)
Optimizer:
  --optimizer NAME          sgd (default), adam, adamw
  --lr F                    learning rate (default 0.01 for sgd, 0.001 for adam/adamw)
  --momentum F              SGD momentum (default 0)
  --nesterov                SGD with Nesterov momentum
  --weight-decay F          L2 (sgd, adam) or decoupled (adamw) weight decay (default 0)
  --schedule KIND           constant (default), step, cosine
  --warmup N                linear warm-up steps (default 0)
  --step-size N             step schedule: steps between decays (default 1000)
  --gamma F                 step schedule: decay factor (default 0.1)
  --min-lr F                cosine schedule: final learning rate (default 0)
  --label-smoothing F       cross-entropy label smoothing in [0, 1)
Memory strategies (see headroom plan):
  --precision P             fp32 (default), tf32, bf16, fp16 (mixed precision, f32 master weights;
                            fp16 with dynamic loss scaling)
  --checkpoint C            activation checkpointing: none, all, every:K, list:I,J, auto
  --micro-batch N           forward/backward N samples at a time, accumulating gradients
  --accumulate N            or: split each batch into N micro-batches
  --offload-optimizer       optimizer state and master weights in host memory
  --memory-limit SIZE       cap the device memory (e.g. 4GiB), like a smaller card
Run:
  --seed N                  seed for initialisation, shuffling and dropout (default 1)
  --device DEV              auto, cpu (default), cuda:N
  --threads N               CPU threads (default: all cores)
  --out DIR                 output folder (default runs/run-YYYYMMDD-HHMMSS)
  --name NAME               name of the run in the history (default: model and time)
  --db FILE                 run history database (default: the user&apos;s data folder)
  --no-history              do not record the run in the history
  --quiet                   only the final line
  --help                    this help
</source>
        <translation>用法：headroom train [选项]

无界面训练模型，并写出 DIR/run.json（配置、每轮指标、最终指标、按类别的显存账本峰值；
见 docs/run-json.md）和 DIR/model.safetensors（PyTorch state_dict 名称）。
最后一行输出为 test_accuracy=0.xxxx。

模型（二选一）：
  --preset NAME             内置模型：seed-cnn（默认）、mlp、lenet5、resnet-mini
  --model FILE.json         模型规格文件（docs/model-spec.md）
数据：
  --data SPEC               fashion-mnist（默认）、mnist、idx:DIR、synthetic
  --train-limit N           只使用前 N 个训练样本（0：全部）
  --test-limit N            只使用前 N 个测试样本（0：全部）
长度：
  --epochs N                遍历训练集的轮数（默认 1）
  --steps N                 改为训练恰好 N 步（在结束时评估）
  --batch N                 每步样本数（批大小，默认 64）
优化器：
  --optimizer NAME          sgd（默认）、adam、adamw
  --lr F                    学习率（sgd 默认 0.01，adam/adamw 默认 0.001）
  --momentum F              SGD 动量（默认 0）
  --nesterov                使用 Nesterov 动量的 SGD
  --weight-decay F          L2（sgd、adam）或解耦（adamw）权重衰减（默认 0）
  --schedule KIND           constant（默认）、step、cosine
  --warmup N                线性预热步数（默认 0）
  --step-size N             阶梯调度：两次衰减之间的步数（默认 1000）
  --gamma F                 阶梯调度：衰减系数（默认 0.1）
  --min-lr F                余弦调度：最终学习率（默认 0）
  --label-smoothing F       交叉熵标签平滑，取值 [0, 1)
显存策略（见 headroom plan）：
  --precision P             fp32（默认）、tf32、bf16、fp16（混合精度，f32 主权重；
                            fp16 使用动态损失缩放）
  --checkpoint C            梯度检查点（激活重计算）：none、all、every:K、list:I,J、auto
  --micro-batch N           每次前向/反向 N 个样本，累积梯度
  --accumulate N            或：把每个批次拆成 N 个微批次（梯度累积）
  --offload-optimizer       优化器状态和主权重放在主机内存中
  --memory-limit SIZE       限制设备显存（例如 4GiB），模拟更小的显卡
运行：
  --seed N                  初始化、打乱和 dropout 的随机种子（默认 1）
  --device DEV              auto、cpu（默认）、cuda:N
  --threads N               CPU 线程数（默认：全部核心）
  --out DIR                 输出文件夹（默认 runs/run-YYYYMMDD-HHMMSS）
  --name NAME               该运行在运行记录中的名称（默认：模型和时间）
  --db FILE                 运行记录数据库（默认：用户数据文件夹）
  --no-history              不把该运行记入运行记录
  --quiet                   只输出最后一行
  --help                    显示本帮助
</translation>
    </message>
    <message>
        <source>--out %1 is a file, not a folder; pass a folder path</source>
        <translation>--out %1 是文件而不是文件夹；请传入文件夹路径</translation>
    </message>
    <message>
        <source>--out %1 is not writable; pick a folder you can write to</source>
        <translation>--out %1 不可写；请选择一个可写的文件夹</translation>
    </message>
    <message>
        <source>--out %1 cannot be created: %2 is not a writable folder</source>
        <translation>无法创建 --out %1：%2 不是可写的文件夹</translation>
    </message>
    <message>
        <source>headroom train: %1
</source>
        <translation>headroom train：%1
</translation>
    </message>
    <message>
        <source><byte value="xd"/>[%1] step %2/%3  epoch %4  loss %5  %6 img/s  ETA %7 </source>
        <translation><byte value="xd"/>[%1] 第 %2/%3 步  第 %4 轮  损失 %5  %6 图像/秒  剩余 %7 </translation>
    </message>
    <message>
        <source>epoch %1: train_loss=%2 train_accuracy=%3 test_loss=%4 test_accuracy=%5 images/s=%6 time=%7s
</source>
        <translation>第 %1 轮：train_loss=%2 train_accuracy=%3 test_loss=%4 test_accuracy=%5 images/s=%6 耗时=%7 秒
</translation>
    </message>
    <message>
        <source>headroom train: the run history is not available (%1); continuing without it
</source>
        <translation>headroom train：运行记录不可用（%1）；将不记录本次运行，继续训练
</translation>
    </message>
    <message>
        <source>headroom train: this fits in %1 (predicted %2): --batch %3 %4
</source>
        <translation>headroom train：以下配置可放入 %1（预测 %2）：--batch %3 %4
</translation>
    </message>
    <message>
        <source>headroom train: no strategy fits in %1 at batch %2; lower --batch
</source>
        <translation>headroom train：批大小 %2 时没有任何策略能放入 %1；请减小 --batch
</translation>
    </message>
    <message>
        <source>headroom train: could not write the results to %1: %2
</source>
        <translation>headroom train：无法将结果写入 %1：%2
</translation>
    </message>
    <message>
        <source>memory (%1), predicted before the run and measured by the ledger:
</source>
        <translation>显存（%1），运行前的预测与账本实测：
</translation>
    </message>
    <message>
        <source>wrote %1 and %2
</source>
        <translation>已写入 %1 和 %2
</translation>
    </message>
    <message>
        <source>recorded as run %1 in %2 (headroom report %1)
</source>
        <translation>已记录为 %2 中的运行 %1（headroom report %1）
</translation>
    </message>
    <message>
        <source>headroom train: stopped after %1 steps; the results so far were written
</source>
        <translation>headroom train：在 %1 步后停止；已写入目前的结果
</translation>
    </message>
    <message>
        <source>headroom presets: takes no options
</source>
        <translation>headroom presets：不接受任何选项
</translation>
    </message>
    <message>
        <source>headroom devices: takes no options
</source>
        <translation>headroom devices：不接受任何选项
</translation>
    </message>
    <message>
        <source>cpu      %1 cores, %2 memory
</source>
        <translation>cpu      %1 个核心，%2 内存
</translation>
    </message>
    <message>
        <source>cuda     none: %1
</source>
        <translation>cuda     无：%1
</translation>
    </message>
    <message>
        <source>cuda:%1   %2, %3 memory (%4 free), compute capability %5.%6
</source>
        <translation>cuda:%1   %2，显存 %3（可用 %4），计算能力 %5.%6
</translation>
    </message>
    <message>
        <source>versions %1
</source>
        <translation>版本 %1
</translation>
    </message>
    <message>
        <source>cuda     not available: this build has no CUDA backend (built without nvcc)
</source>
        <translation>cuda     不可用：此构建没有 CUDA 后端（构建时没有 nvcc）
</translation>
    </message>
</context>
<context>
    <name>PlanTable</name>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <source>strategy</source>
        <translation>策略</translation>
    </message>
    <message>
        <source>device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>step (est.)</source>
        <translation>每步（估计）</translation>
    </message>
    <message>
        <source>verdict</source>
        <translation>结论</translation>
    </message>
    <message>
        <source>best: fits, fastest</source>
        <translation>最佳：放得下，最快</translation>
    </message>
    <message>
        <source>fits in less memory, %1% slower than the best</source>
        <translation>放得下且更省内存，比最佳慢 %1%</translation>
    </message>
    <message>
        <source>fits, %1% slower; row %2 is no larger and no slower</source>
        <translation>放得下，慢 %1%；第 %2 行不比它大也不比它慢</translation>
    </message>
    <message>
        <source>fits, %1% slower than the best</source>
        <translation>放得下，比最佳慢 %1%</translation>
    </message>
    <message>
        <source>does not fit: %1 over the budget</source>
        <translation>放不下：超出预算 %1</translation>
    </message>
    <message>
        <source>(no strategies: fp32)</source>
        <translation>（无策略：fp32）</translation>
    </message>
    <message>
        <source>Not shown: %1 that fit but another row is no larger and no slower, %2 that do not fit (--all lists them).</source>
        <translation>未列出：%1 个放得下但另有一行不比它大也不比它慢的配置，%2 个放不下的配置（--all 会全部列出）。</translation>
    </message>
    <message>
        <source>Left out: %1 combinations that add nothing (offload that moves nothing off the device, or the same plan as a row above).</source>
        <translation>已省略：%1 个没有额外作用的组合（卸载不会把任何数据移出设备，或与上面某行的方案相同）。</translation>
    </message>
</context>
<context>
    <name>ReportCommand</name>
    <message>
        <source>unknown option &apos;%1&apos;</source>
        <translation>未知选项“%1”</translation>
    </message>
    <message>
        <source>option &apos;%1&apos; needs a value</source>
        <translation>选项“%1”需要一个值</translation>
    </message>
    <message>
        <source>unknown option &apos;--%1&apos;</source>
        <translation>未知选项“--%1”</translation>
    </message>
    <message>
        <source>usage: headroom report RUN [--format html|pdf|json|csv] [--out FILE] [--db FILE]
RUN is a run id, &apos;last&apos;, or a run&apos;s name (see headroom runs).
</source>
        <translation>用法：headroom report RUN [--format html|pdf|json|csv] [--out FILE] [--db FILE]
RUN 是运行编号、“last”或运行名称（见 headroom runs）。
</translation>
    </message>
    <message>
        <source>headroom report: %1
</source>
        <translation>headroom report：%1
</translation>
    </message>
    <message>
        <source>headroom report: give exactly one run
</source>
        <translation>headroom report：请只给出一个运行
</translation>
    </message>
    <message>
        <source>headroom report: unknown format &apos;%1&apos;; use html, pdf, json or csv
</source>
        <translation>headroom report：未知格式“%1”；请使用 html、pdf、json 或 csv
</translation>
    </message>
    <message>
        <source>headroom report: there is no run history at %1
</source>
        <translation>headroom report：%1 处没有运行历史
</translation>
    </message>
    <message>
        <source>headroom report: no run &apos;%1&apos; in %2; list the runs with: headroom runs
</source>
        <translation>headroom report：%2 中没有运行“%1”；可用 headroom runs 列出运行
</translation>
    </message>
    <message>
        <source>headroom report: --out %1 is a folder; give a file name
</source>
        <translation>headroom report：--out %1 是文件夹；请给出文件名
</translation>
    </message>
    <message>
        <source>headroom report: cannot write %1: the folder %2 does not exist or is not writable
</source>
        <translation>headroom report：无法写入 %1：文件夹 %2 不存在或不可写
</translation>
    </message>
    <message>
        <source>headroom report: run %1 could not be read
</source>
        <translation>headroom report：无法读取运行 %1
</translation>
    </message>
    <message>
        <source>usage: headroom runs [--status running,finished,failed,stopped] [--filter TEXT] [--limit N] [--db FILE]
</source>
        <translation>用法：headroom runs [--status running,finished,failed,stopped] [--filter TEXT] [--limit N] [--db FILE]
</translation>
    </message>
    <message>
        <source>headroom runs: %1
</source>
        <translation>headroom runs：%1
</translation>
    </message>
    <message>
        <source>unexpected argument &apos;%1&apos;</source>
        <translation>多余的参数“%1”</translation>
    </message>
    <message>
        <source>headroom runs: unknown status &apos;%1&apos;; use running, finished, failed or stopped
</source>
        <translation>headroom runs：未知状态“%1”；请使用 running、finished、failed 或 stopped
</translation>
    </message>
    <message>
        <source>headroom runs: --limit must be a whole number of 0 or more
</source>
        <translation>headroom runs：--limit 必须是不小于 0 的整数
</translation>
    </message>
    <message>
        <source>headroom runs: there is no run history at %1
</source>
        <translation>headroom runs：%1 处没有运行历史
</translation>
    </message>
    <message>
        <source>No runs in %1.
</source>
        <translation>%1 中没有运行。
</translation>
    </message>
    <message>
        <source>ID</source>
        <translation>编号</translation>
    </message>
    <message>
        <source>STATUS</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>STARTED</source>
        <translation>开始时间</translation>
    </message>
    <message>
        <source>TEST ACC</source>
        <translation>测试准确率</translation>
    </message>
    <message>
        <source>NAME</source>
        <translation>名称</translation>
    </message>
</context>
<context>
    <name>ReportWriter</name>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 h %2 min %3 s</source>
        <translation>%1 小时 %2 分 %3 秒</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>The run has no model spec stored.</source>
        <translation>该运行未保存模型规格。</translation>
    </message>
    <message>
        <source>The stored model spec cannot be read: %1</source>
        <translation>无法读取保存的模型规格：%1</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Accuracy</source>
        <translation>准确率</translation>
    </message>
    <message>
        <source>accuracy</source>
        <translation>准确率</translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation>吞吐量</translation>
    </message>
    <message>
        <source>images per second</source>
        <translation>每秒图像数</translation>
    </message>
    <message>
        <source>training loss (step)</source>
        <translation>训练损失（每步）</translation>
    </message>
    <message>
        <source>training accuracy (step)</source>
        <translation>训练准确率（每步）</translation>
    </message>
    <message>
        <source>images/s</source>
        <translation>图像/秒</translation>
    </message>
    <message>
        <source>test loss (epoch)</source>
        <translation>测试损失（每轮）</translation>
    </message>
    <message>
        <source>test accuracy (epoch)</source>
        <translation>测试准确率（每轮）</translation>
    </message>
    <message>
        <source>Memory by category</source>
        <translation>按类别的显存占用</translation>
    </message>
    <message>
        <source>MiB</source>
        <translation>MiB</translation>
    </message>
    <message>
        <source>predicted</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>measured (peak)</source>
        <translation>实测（峰值）</translation>
    </message>
    <message>
        <source>seconds</source>
        <translation>秒</translation>
    </message>
    <message>
        <source>Power</source>
        <translation>功耗</translation>
    </message>
    <message>
        <source>watts</source>
        <translation>瓦</translation>
    </message>
    <message>
        <source>Utilisation</source>
        <translation>利用率</translation>
    </message>
    <message>
        <source>percent</source>
        <translation>百分比</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>Memory over time</source>
        <translation>显存随时间变化</translation>
    </message>
    <message>
        <source> (NVML used)</source>
        <translation>（NVML 已用）</translation>
    </message>
    <message>
        <source>process resident (RSS)</source>
        <translation>进程常驻内存（RSS）</translation>
    </message>
    <message>
        <source>ledger allocated</source>
        <translation>账本已分配</translation>
    </message>
    <message>
        <source>ledger reserved</source>
        <translation>账本已保留</translation>
    </message>
    <message>
        <source>Run report: %1</source>
        <translation>运行报告：%1</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>Error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Data</source>
        <translation>数据</translation>
    </message>
    <message>
        <source>%1 layers, %2 trainable parameters, %3 of activations kept for backward per sample (f32).</source>
        <translation>%1 层，%2 个可训练参数，每个样本为反向传播保留 %3 激活值（f32）。</translation>
    </message>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <source>Layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Input</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Activations / sample</source>
        <translation>激活值 / 样本</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>数据集</translation>
    </message>
    <message>
        <source>Batch size</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>Samples trained</source>
        <translation>已训练样本数</translation>
    </message>
    <message>
        <source>Device and versions</source>
        <translation>设备与版本</translation>
    </message>
    <message>
        <source>GPU %1</source>
        <translation>GPU %1</translation>
    </message>
    <message>
        <source>Headroom</source>
        <translation>Headroom</translation>
    </message>
    <message>
        <source>Qt</source>
        <translation>Qt</translation>
    </message>
    <message>
        <source>Operating system</source>
        <translation>操作系统</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>The run&apos;s configuration holds no strategy or optimizer settings.</source>
        <translation>该运行的配置中没有策略或优化器设置。</translation>
    </message>
    <message>
        <source>Memory: predicted and measured</source>
        <translation>显存：预测与实测</translation>
    </message>
    <message>
        <source>No memory figures were recorded for this run.</source>
        <translation>该运行没有记录显存数据。</translation>
    </message>
    <message>
        <source>Prediction not available: the run was started without a memory plan; measured figures are shown alone.</source>
        <translation>无预测数据：该运行启动时没有显存规划，仅显示实测数据。</translation>
    </message>
    <message>
        <source>Category</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>Predicted</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>Measured peak</source>
        <translation>实测峰值</translation>
    </message>
    <message>
        <source>At total peak</source>
        <translation>总峰值时</translation>
    </message>
    <message>
        <source>Measured − predicted</source>
        <translation>实测 − 预测</translation>
    </message>
    <message>
        <source>Total</source>
        <translation>合计</translation>
    </message>
    <message>
        <source>Loss, accuracy and throughput</source>
        <translation>损失、准确率与吞吐量</translation>
    </message>
    <message>
        <source>No training steps were recorded.</source>
        <translation>没有记录训练步。</translation>
    </message>
    <message>
        <source>Epoch</source>
        <translation>轮</translation>
    </message>
    <message>
        <source>Train loss</source>
        <translation>训练损失</translation>
    </message>
    <message>
        <source>Train accuracy</source>
        <translation>训练准确率</translation>
    </message>
    <message>
        <source>Test loss</source>
        <translation>测试损失</translation>
    </message>
    <message>
        <source>Test accuracy</source>
        <translation>测试准确率</translation>
    </message>
    <message>
        <source>Images/s</source>
        <translation>图像/秒</translation>
    </message>
    <message>
        <source>Power, utilisation and memory over time</source>
        <translation>功耗、利用率与显存随时间变化</translation>
    </message>
    <message>
        <source>No telemetry was recorded for this run.</source>
        <translation>该运行没有记录遥测数据。</translation>
    </message>
    <message>
        <source>No GPU telemetry: no NVIDIA driver was found while the run trained; host figures are shown.</source>
        <translation>无 GPU 遥测：训练时未找到 NVIDIA 驱动；显示主机数据。</translation>
    </message>
    <message>
        <source>Telemetry holds no plottable figures.</source>
        <translation>遥测数据中没有可绘制的数值。</translation>
    </message>
    <message>
        <source>Energy</source>
        <translation>能耗</translation>
    </message>
    <message>
        <source>Energy not measured: NVML gave no energy or power figures for this run.</source>
        <translation>未测量能耗：NVML 没有为该运行提供能耗或功率数据。</translation>
    </message>
    <message>
        <source>Energy used by the GPUs</source>
        <translation>GPU 消耗的能量</translation>
    </message>
    <message>
        <source>%1 J (%2 Wh)</source>
        <translation>%1 焦耳（%2 瓦时）</translation>
    </message>
    <message>
        <source>Energy per training sample</source>
        <translation>每个训练样本的能耗</translation>
    </message>
    <message>
        <source>%1 J</source>
        <translation>%1 焦耳</translation>
    </message>
    <message>
        <source>Estimated by integrating sampled power draw over time (the GPU has no energy counter).</source>
        <translation>通过对采样功率随时间积分估算（该 GPU 没有能耗计数器）。</translation>
    </message>
    <message>
        <source>Durations</source>
        <translation>耗时</translation>
    </message>
    <message>
        <source>Wall-clock time</source>
        <translation>墙钟时间</translation>
    </message>
    <message>
        <source>Training time</source>
        <translation>训练时间</translation>
    </message>
    <message>
        <source>Mean step time</source>
        <translation>平均每步时间</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>Epoch %1</source>
        <translation>第 %1 轮</translation>
    </message>
    <message>
        <source>Final metrics</source>
        <translation>最终指标</translation>
    </message>
    <message>
        <source>The run has not ended.</source>
        <translation>该运行尚未结束。</translation>
    </message>
    <message>
        <source>No final metrics were recorded.</source>
        <translation>没有记录最终指标。</translation>
    </message>
    <message>
        <source>Epochs completed</source>
        <translation>已完成轮数</translation>
    </message>
    <message>
        <source>Cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <source>Path</source>
        <translation>路径</translation>
    </message>
    <message>
        <source>%1 %</source>
        <translation>%1%</translation>
    </message>
    <message>
        <source>synthetic images (generated)</source>
        <translation>合成图像（程序生成）</translation>
    </message>
    <message>
        <source>IDX files in %1</source>
        <translation>%1 中的 IDX 文件</translation>
    </message>
    <message>
        <source>setup, before the first step</source>
        <translation>准备阶段（第一步之前）</translation>
    </message>
    <message>
        <source>the forward pass</source>
        <translation>前向传播</translation>
    </message>
    <message>
        <source>the backward pass</source>
        <translation>反向传播</translation>
    </message>
    <message>
        <source>the optimizer update</source>
        <translation>优化器更新</translation>
    </message>
    <message>
        <source>evaluation</source>
        <translation>评估</translation>
    </message>
    <message>
        <source>%1 (%2 parameters) on %3</source>
        <translation>%1（%2 个参数），数据 %3</translation>
    </message>
    <message>
        <source>%1 on %2</source>
        <translation>%1，数据 %2</translation>
    </message>
    <message>
        <source>Outcome</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>after epoch %1</source>
        <translation>第 %1 轮之后</translation>
    </message>
    <message>
        <source>at the end of the run</source>
        <translation>运行结束时</translation>
    </message>
    <message>
        <source>not evaluated</source>
        <translation>未评估</translation>
    </message>
    <message>
        <source>%1 images/s</source>
        <translation>%1 张图像/秒</translation>
    </message>
    <message>
        <source>mean step %1 ms</source>
        <translation>平均每步 %1 毫秒</translation>
    </message>
    <message>
        <source>Wall time</source>
        <translation>总耗时</translation>
    </message>
    <message>
        <source>%1 in the trainer</source>
        <translation>训练器内 %1</translation>
    </message>
    <message>
        <source>%1 of the memory limit of %2</source>
        <translation>占内存上限 %2 的 %1</translation>
    </message>
    <message>
        <source>%1 of the device&apos;s %2</source>
        <translation>占设备 %2 的 %1</translation>
    </message>
    <message>
        <source>device capacity not recorded</source>
        <translation>未记录设备容量</translation>
    </message>
    <message>
        <source>Peak memory</source>
        <translation>内存峰值</translation>
    </message>
    <message>
        <source>no prediction recorded</source>
        <translation>未记录预测</translation>
    </message>
    <message>
        <source>measured %1: equal to the byte</source>
        <translation>实测 %1：逐字节一致</translation>
    </message>
    <message>
        <source>measured %1 (%2%3)</source>
        <translation>实测 %1（%2%3）</translation>
    </message>
    <message>
        <source>Predicted peak</source>
        <translation>预测峰值</translation>
    </message>
    <message>
        <source>%1 Wh, %2 J per sample</source>
        <translation>%1 Wh，每个样本 %2 J</translation>
    </message>
    <message>
        <source>%1 Wh</source>
        <translation>%1 Wh</translation>
    </message>
    <message>
        <source>not measured (no NVML figures)</source>
        <translation>未测量（没有 NVML 数据）</translation>
    </message>
    <message>
        <source>Optimizer steps</source>
        <translation>优化器步数</translation>
    </message>
    <message>
        <source>%1 samples, batch %2</source>
        <translation>%1 个样本，批大小 %2</translation>
    </message>
    <message>
        <source>The loss curve is on the first page.</source>
        <translation>损失曲线见第一页。</translation>
    </message>
    <message>
        <source>Per epoch</source>
        <translation>逐轮</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>The planner&apos;s prediction at the start against the memory ledger&apos;s measurement: each category&apos;s own peak, and its share when all of them together peaked.</source>
        <translation>开始时规划器的预测与内存账本的实测对比：各类别各自的峰值，以及总量达到峰值时各类别的占比。</translation>
    </message>
    <message>
        <source>All categories together peaked at %1 during %2 of step %3.</source>
        <translation>所有类别合计在第 %3 步的%2期间达到峰值 %1。</translation>
    </message>
    <message>
        <source>All categories together peaked at %1 during %2.</source>
        <translation>所有类别合计在%2期间达到峰值 %1。</translation>
    </message>
    <message>
        <source>bf16 mixed precision, fp32 master weights</source>
        <translation>bf16 混合精度，fp32 主权重</translation>
    </message>
    <message>
        <source>fp16 mixed precision, fp32 master weights, dynamic loss scaling (from %1, doubled after %2 steps without overflow)</source>
        <translation>fp16 混合精度，fp32 主权重，动态损失缩放（初始 %1，连续 %2 步无溢出后翻倍）</translation>
    </message>
    <message>
        <source>tf32 matrix multiplications, fp32 elsewhere</source>
        <translation>矩阵乘法用 tf32，其余为 fp32</translation>
    </message>
    <message>
        <source>fp32 throughout</source>
        <translation>全程 fp32</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>none: every activation is kept for backward</source>
        <translation>无：所有激活值都保留到反向传播</translation>
    </message>
    <message>
        <source>every block (recomputed in backward)</source>
        <translation>所有块（在反向传播中重新计算）</translation>
    </message>
    <message>
        <source>the blocks the planner chose to fit the memory</source>
        <translation>规划器为放进内存而选定的块</translation>
    </message>
    <message>
        <source>one block in every %1</source>
        <translation>每 %1 个块中的一个</translation>
    </message>
    <message>
        <source>blocks %1</source>
        <translation>块 %1</translation>
    </message>
    <message>
        <source>Activation checkpointing</source>
        <translation>激活检查点</translation>
    </message>
    <message>
        <source>Micro-batches</source>
        <translation>微批次</translation>
    </message>
    <message>
        <source>%1 samples each, gradients accumulated over %2</source>
        <translation>每个 %1 个样本，梯度在 %2 个微批次上累积</translation>
    </message>
    <message>
        <source>the whole batch at once</source>
        <translation>整批一次完成</translation>
    </message>
    <message>
        <source>Optimizer state</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>in host memory (offloaded), with the master weights</source>
        <translation>连同主权重放在主机内存中（卸载）</translation>
    </message>
    <message>
        <source>on the device</source>
        <translation>在设备上</translation>
    </message>
    <message>
        <source>%1, learning rate %2</source>
        <translation>%1，学习率 %2</translation>
    </message>
    <message>
        <source>, momentum %1</source>
        <translation>，动量 %1</translation>
    </message>
    <message>
        <source> (Nesterov)</source>
        <translation>（Nesterov）</translation>
    </message>
    <message>
        <source>, dampening %1</source>
        <translation>，阻尼 %1</translation>
    </message>
    <message>
        <source>, no momentum</source>
        <translation>，无动量</translation>
    </message>
    <message>
        <source>, betas %1 and %2, epsilon %3</source>
        <translation>，beta 为 %1 和 %2，epsilon %3</translation>
    </message>
    <message>
        <source>, decoupled weight decay %1</source>
        <translation>，解耦权重衰减 %1</translation>
    </message>
    <message>
        <source>, weight decay %1</source>
        <translation>，权重衰减 %1</translation>
    </message>
    <message>
        <source>multiplied by %1 every %2 steps</source>
        <translation>每 %2 步乘以 %1</translation>
    </message>
    <message>
        <source>cosine decay to %1</source>
        <translation>余弦衰减到 %1</translation>
    </message>
    <message>
        <source>constant</source>
        <translation>恒定</translation>
    </message>
    <message>
        <source>%1, after a linear warm-up over %2 steps</source>
        <translation>%1，之前先线性预热 %2 步</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>Memory strategies and optimizer</source>
        <translation>内存策略与优化器</translation>
    </message>
    <message>
        <source>the first %1</source>
        <translation>前 %1 个</translation>
    </message>
    <message>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>Training samples</source>
        <translation>训练样本</translation>
    </message>
    <message>
        <source>Test samples</source>
        <translation>测试样本</translation>
    </message>
    <message>
        <source>Length</source>
        <translation>时长</translation>
    </message>
    <message>
        <source>1 step</source>
        <translation>1 步</translation>
    </message>
    <message>
        <source>%1 steps</source>
        <translation>%1 步</translation>
    </message>
    <message>
        <source>1 epoch</source>
        <translation>1 轮</translation>
    </message>
    <message>
        <source>%1 epochs</source>
        <translation>%1 轮</translation>
    </message>
    <message>
        <source>Test set</source>
        <translation>测试集</translation>
    </message>
    <message>
        <source>evaluated after every epoch</source>
        <translation>每轮之后评估</translation>
    </message>
    <message>
        <source>evaluated at the end</source>
        <translation>结束时评估</translation>
    </message>
    <message>
        <source>the preset %1</source>
        <translation>预设 %1</translation>
    </message>
    <message>
        <source>the file %1</source>
        <translation>文件 %1</translation>
    </message>
    <message>
        <source>built in the window</source>
        <translation>在窗口中搭建</translation>
    </message>
    <message>
        <source>Trained on</source>
        <translation>训练设备</translation>
    </message>
    <message>
        <source>Device asked for</source>
        <translation>请求的设备</translation>
    </message>
    <message>
        <source>automatic (a GPU when one works)</source>
        <translation>自动（有可用 GPU 时用 GPU）</translation>
    </message>
    <message>
        <source>CPU threads</source>
        <translation>CPU 线程</translation>
    </message>
    <message>
        <source>all cores</source>
        <translation>全部核心</translation>
    </message>
    <message>
        <source>Memory limit</source>
        <translation>内存上限</translation>
    </message>
    <message>
        <source>Steps recorded</source>
        <translation>记录的步数</translation>
    </message>
    <message>
        <source>Training accuracy (last epoch)</source>
        <translation>训练准确率（最后一轮）</translation>
    </message>
    <message>
        <source>Training loss (last epoch)</source>
        <translation>训练损失（最后一轮）</translation>
    </message>
    <message>
        <source>Time in the trainer</source>
        <translation>训练器内耗时</translation>
    </message>
    <message>
        <source>Peak memory (all categories)</source>
        <translation>内存峰值（所有类别）</translation>
    </message>
    <message>
        <source>Peak reserved (allocated + cached)</source>
        <translation>保留峰值（已分配 + 缓存）</translation>
    </message>
    <message>
        <source>Peak reached during</source>
        <translation>峰值出现于</translation>
    </message>
    <message>
        <source>%1 of step %2</source>
        <translation>第 %2 步的%1</translation>
    </message>
    <message>
        <source>Written by Headroom %1 on %2.</source>
        <translation>由 Headroom %1 于 %2 生成。</translation>
    </message>
    <message>
        <source>The report template is damaged.</source>
        <translation>报告模板已损坏。</translation>
    </message>
    <message>
        <source>Headroom run report · %1</source>
        <translation>Headroom 运行报告 · %1</translation>
    </message>
    <message>
        <source>page %1 of %2</source>
        <translation>第 %1 页，共 %2 页</translation>
    </message>
</context>
<context>
    <name>RunStore</name>
    <message>
        <source>Cannot create the folder %1 for the run history; check its permissions.</source>
        <translation>无法为运行历史创建文件夹 %1；请检查其权限。</translation>
    </message>
    <message>
        <source>Cannot open the run history %1: %2</source>
        <translation>无法打开运行历史 %1：%2</translation>
    </message>
    <message>
        <source>The run history %1 was written by a newer Headroom (schema %2, this one reads up to %3); update Headroom or choose another file.</source>
        <translation>运行历史 %1 由更新版本的 Headroom 写入（模式 %2，本版本最高支持 %3）；请更新 Headroom 或选择其他文件。</translation>
    </message>
    <message>
        <source>Cannot upgrade the run history %1 from schema %2: %3</source>
        <translation>无法将运行历史 %1 从模式 %2 升级：%3</translation>
    </message>
    <message>
        <source>the program ended during the run</source>
        <translation>程序在运行期间结束</translation>
    </message>
    <message>
        <source>The run history is not open.</source>
        <translation>运行历史未打开。</translation>
    </message>
    <message>
        <source>%1 on %2</source>
        <translation>%1，数据 %2</translation>
    </message>
    <message>
        <source>A run&apos;s name cannot be empty.</source>
        <translation>运行名称不能为空。</translation>
    </message>
    <message>
        <source>There is no run %1.</source>
        <translation>不存在运行 %1。</translation>
    </message>
</context>
<context>
    <name>WebhookNotifier</name>
    <message>
        <source>Run &quot;%1&quot; %2</source>
        <translation>运行“%1”%2</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>was stopped</source>
        <translation>已被停止</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>no answer within %1 s</source>
        <translation>%1 秒内无应答</translation>
    </message>
    <message>
        <source>HTTP status %1</source>
        <translation>HTTP 状态码 %1</translation>
    </message>
    <message>
        <source>Webhook %1 failed for &apos;%2&apos;: %3; training is not affected.</source>
        <translation>Webhook %1 发送“%2”失败：%3；训练不受影响。</translation>
    </message>
    <message>
        <source>Headroom: run &quot;%1&quot; %2</source>
        <translation>Headroom：运行“%1”%2</translation>
    </message>
    <message>
        <source>Error: %1</source>
        <translation>错误：%1</translation>
    </message>
    <message>
        <source>Test accuracy: %1</source>
        <translation>测试准确率：%1</translation>
    </message>
    <message>
        <source>Test loss: %1</source>
        <translation>测试损失：%1</translation>
    </message>
    <message>
        <source>Training time: %1 s</source>
        <translation>训练时间：%1 秒</translation>
    </message>
    <message>
        <source>Headroom: run &quot;%1&quot; epoch %2 of %3</source>
        <translation>Headroom：运行“%1”第 %2/%3 轮</translation>
    </message>
    <message>
        <source>Headroom: run &quot;%1&quot; epoch %2</source>
        <translation>Headroom：运行“%1”第 %2 轮</translation>
    </message>
    <message>
        <source>Train loss: %1</source>
        <translation>训练损失：%1</translation>
    </message>
</context>
<context>
    <name>data.fashion_mnist</name>
    <message>
        <source>Fashion-MNIST: 60000/10000 grey 28x28 images of clothing, 10 classes</source>
        <translation>Fashion-MNIST：60000/10000 张 28x28 灰度服装图像，10 个类别</translation>
    </message>
</context>
<context>
    <name>data.idx</name>
    <message>
        <source>IDX files (MNIST format) from a folder: train-/t10k- images and labels, raw or .gz</source>
        <translation>文件夹中的 IDX 文件（MNIST 格式）：train-/t10k- 图像和标签，原始或 .gz</translation>
    </message>
</context>
<context>
    <name>data.mnist</name>
    <message>
        <source>MNIST: 60000/10000 grey 28x28 handwritten digits, 10 classes</source>
        <translation>MNIST：60000/10000 张 28x28 灰度手写数字，10 个类别</translation>
    </message>
</context>
<context>
    <name>data.not_found</name>
    <message>
        <source>dataset &apos;%1&apos; not found; searched %2. To use it, download train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz into %3, or set HEADROOM_DATA_DIR to a folder holding %1/, or pass --data idx:DIR with a folder holding the four IDX files</source>
        <translation>找不到数据集“%1”；已查找 %2。要使用它，请将 train-images-idx3-ubyte.gz、train-labels-idx1-ubyte.gz、t10k-images-idx3-ubyte.gz 和 t10k-labels-idx1-ubyte.gz 下载到 %3，或将 HEADROOM_DATA_DIR 设为包含 %1/ 的文件夹，或用 --data idx:DIR 指定包含这四个 IDX 文件的文件夹</translation>
    </message>
</context>
<context>
    <name>data.not_found_package</name>
    <message>
        <source>dataset &apos;%1&apos; not found; searched %2. To use it, install it (apt install dataset-fashion-mnist), or set HEADROOM_DATA_DIR to a folder holding %1/, or pass --data idx:DIR with a folder holding the four IDX files</source>
        <translation>找不到数据集“%1”；已查找 %2。要使用它，请安装它（apt install dataset-fashion-mnist），或将 HEADROOM_DATA_DIR 设为包含 %1/ 的文件夹，或用 --data idx:DIR 指定包含这四个 IDX 文件的文件夹</translation>
    </message>
</context>
<context>
    <name>data.probe_generated</name>
    <message>
        <source>generated in memory</source>
        <translation>在内存中生成</translation>
    </message>
</context>
<context>
    <name>data.probe_missing</name>
    <message>
        <source>%1: missing %2</source>
        <translation>%1：缺少 %2</translation>
    </message>
</context>
<context>
    <name>data.probe_no_folder</name>
    <message>
        <source>folder &apos;%1&apos; not found</source>
        <translation>找不到文件夹“%1”</translation>
    </message>
</context>
<context>
    <name>data.probe_not_idx</name>
    <message>
        <source>%1: image files are not IDX u8 (N, H, W) files</source>
        <translation>%1：图像文件不是 IDX u8 (N, H, W) 格式</translation>
    </message>
</context>
<context>
    <name>data.probe_summary</name>
    <message>
        <source>%1 train / %2 test images of %3x%4</source>
        <translation>%1 张训练 / %2 张测试图像，%3x%4</translation>
    </message>
</context>
<context>
    <name>data.synthetic</name>
    <message>
        <source>Generated 28x28 blobs, 10 classes, 2048/512 samples; needs no download</source>
        <translation>生成的 28x28 光斑图像，10 个类别，2048/512 个样本；无需下载</translation>
    </message>
</context>
<context>
    <name>data.unknown</name>
    <message>
        <source>unknown dataset &apos;%1&apos;; use one of %2</source>
        <translation>未知数据集“%1”；请使用以下之一：%2</translation>
    </message>
</context>
<context>
    <name>hrapp::DataPanel</name>
    <message>
        <source>Fashion-MNIST</source>
        <translation>Fashion-MNIST</translation>
    </message>
    <message>
        <source>MNIST</source>
        <translation>MNIST</translation>
    </message>
    <message>
        <source>IDX folder</source>
        <translation>IDX 文件夹</translation>
    </message>
    <message>
        <source>Synthetic (generated)</source>
        <translation>合成数据（生成）</translation>
    </message>
    <message>
        <source>Dataset</source>
        <translation>数据集</translation>
    </message>
    <message>
        <source>folder with train-images-idx3-ubyte(.gz), …</source>
        <translation>包含 train-images-idx3-ubyte(.gz) 等文件的文件夹</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>文件夹</translation>
    </message>
    <message>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>Use only the first N training samples (0: all)</source>
        <translation>只使用前 N 个训练样本（0：全部）</translation>
    </message>
    <message>
        <source>Use only the first N test samples (0: all)</source>
        <translation>只使用前 N 个测试样本（0：全部）</translation>
    </message>
    <message>
        <source>Training samples</source>
        <translation>训练样本</translation>
    </message>
    <message>
        <source>Test samples</source>
        <translation>测试样本</translation>
    </message>
    <message>
        <source>Preview (test set)</source>
        <translation>预览（测试集）</translation>
    </message>
    <message>
        <source>Choose an IDX folder</source>
        <translation>选择 IDX 文件夹</translation>
    </message>
    <message>
        <source>Choose a folder holding IDX files.</source>
        <translation>请选择包含 IDX 文件的文件夹。</translation>
    </message>
    <message>
        <source>No preview</source>
        <translation>无预览</translation>
    </message>
    <message>
        <source>Not available: %1</source>
        <translation>不可用：%1</translation>
    </message>
    <message>
        <source>No test files to preview in %1</source>
        <translation>%1 中没有可预览的测试文件</translation>
    </message>
    <message>
        <source>Preview failed: %1</source>
        <translation>预览失败：%1</translation>
    </message>
</context>
<context>
    <name>hrapp::HardwareView</name>
    <message>
        <source>Hardware</source>
        <translation>硬件</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Memory used / total</source>
        <translation>显存已用 / 总量</translation>
    </message>
    <message>
        <source>Power / limit</source>
        <translation>功耗 / 上限</translation>
    </message>
    <message>
        <source>Utilisation</source>
        <translation>利用率</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>SM clock</source>
        <translation>SM 频率</translation>
    </message>
    <message>
        <source>time (s)</source>
        <translation>时间（秒）</translation>
    </message>
    <message>
        <source>GPU power</source>
        <translation>GPU 功耗</translation>
    </message>
    <message>
        <source>watts</source>
        <translation>瓦</translation>
    </message>
    <message>
        <source>GPU utilisation</source>
        <translation>GPU 利用率</translation>
    </message>
    <message>
        <source>percent</source>
        <translation>百分比</translation>
    </message>
    <message>
        <source>GPU temperature</source>
        <translation>GPU 温度</translation>
    </message>
    <message>
        <source>°C</source>
        <translation>°C</translation>
    </message>
    <message>
        <source>GPU memory</source>
        <translation>GPU 显存</translation>
    </message>
    <message>
        <source>GiB</source>
        <translation>GiB</translation>
    </message>
    <message>
        <source>Host CPU</source>
        <translation>主机 CPU</translation>
    </message>
    <message>
        <source>CPU utilisation</source>
        <translation>CPU 利用率</translation>
    </message>
    <message>
        <source>Host memory</source>
        <translation>主机内存</translation>
    </message>
    <message>
        <source>RAM used</source>
        <translation>已用内存</translation>
    </message>
    <message>
        <source>Headroom resident (RSS)</source>
        <translation>Headroom 常驻内存（RSS）</translation>
    </message>
    <message>
        <source>host only</source>
        <translation>仅主机</translation>
    </message>
    <message>
        <source>&lt;b&gt;No NVIDIA driver found&lt;/b&gt;: GPU power, utilisation, temperature and memory cannot be read on this machine. The host&apos;s CPU and memory are shown instead.</source>
        <translation>&lt;b&gt;未找到 NVIDIA 驱动&lt;/b&gt;：无法在本机读取 GPU 功耗、利用率、温度和显存，改为显示主机的 CPU 和内存。</translation>
    </message>
    <message>
        <source>GPU %1</source>
        <translation>GPU %1</translation>
    </message>
    <message>
        <source>GPU %1 (%2)</source>
        <translation>GPU %1（%2）</translation>
    </message>
    <message>
        <source>GPU %1 used (NVML)</source>
        <translation>GPU %1 已用（NVML）</translation>
    </message>
    <message>
        <source>ledger allocated</source>
        <translation>账本已分配</translation>
    </message>
    <message>
        <source>ledger reserved</source>
        <translation>账本已保留</translation>
    </message>
    <message>
        <source>%1 / %2 GiB</source>
        <translation>%1 / %2 GiB</translation>
    </message>
    <message>
        <source>%1 / %2 W</source>
        <translation>%1 / %2 瓦</translation>
    </message>
    <message>
        <source>%1 %</source>
        <translation>%1 %</translation>
    </message>
    <message>
        <source>%1 °C</source>
        <translation>%1 °C</translation>
    </message>
    <message>
        <source>%1 MHz</source>
        <translation>%1 MHz</translation>
    </message>
</context>
<context>
    <name>hrapp::MainWindow</name>
    <message>
        <source>Monitor</source>
        <translation>监控</translation>
    </message>
    <message>
        <source>Log</source>
        <translation>日志</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>Model builder</source>
        <translation>模型构建器</translation>
    </message>
    <message>
        <source>Data</source>
        <translation>数据</translation>
    </message>
    <message>
        <source>Training setup</source>
        <translation>训练设置</translation>
    </message>
    <message>
        <source>&amp;New model</source>
        <translation>新建模型(&amp;N)</translation>
    </message>
    <message>
        <source>&amp;Open model…</source>
        <translation>打开模型(&amp;O)…</translation>
    </message>
    <message>
        <source>&amp;Save model</source>
        <translation>保存模型(&amp;S)</translation>
    </message>
    <message>
        <source>Save model &amp;as…</source>
        <translation>模型另存为(&amp;A)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Undo</source>
        <translation>撤销(&amp;U)</translation>
    </message>
    <message>
        <source>&amp;Redo</source>
        <translation>重做(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Start</source>
        <translation>开始(&amp;S)</translation>
    </message>
    <message>
        <source>Start training (F5)</source>
        <translation>开始训练（F5）</translation>
    </message>
    <message>
        <source>&amp;Pause</source>
        <translation>暂停(&amp;P)</translation>
    </message>
    <message>
        <source>Pause between steps (F6)</source>
        <translation>在两步之间暂停（F6）</translation>
    </message>
    <message>
        <source>&amp;Resume</source>
        <translation>继续(&amp;R)</translation>
    </message>
    <message>
        <source>Resume training (F7)</source>
        <translation>继续训练（F7）</translation>
    </message>
    <message>
        <source>S&amp;top</source>
        <translation>停止(&amp;T)</translation>
    </message>
    <message>
        <source>Stop after the current step (Shift+F5)</source>
        <translation>在当前步之后停止（Shift+F5）</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>Open &amp;recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Preferences…</source>
        <translation>首选项(&amp;P)…</translation>
    </message>
    <message>
        <source>&amp;Model</source>
        <translation>模型(&amp;M)</translation>
    </message>
    <message>
        <source>&amp;Presets</source>
        <translation>预设(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation>运行(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>Reset chart &amp;views</source>
        <translation>重置图表视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About Headroom</source>
        <translation>关于 Headroom(&amp;A)</translation>
    </message>
    <message>
        <source>About &amp;Qt</source>
        <translation>关于 Qt(&amp;Q)</translation>
    </message>
    <message>
        <source>Device: %1</source>
        <translation>设备：%1</translation>
    </message>
    <message>
        <source>Step —</source>
        <translation>步 —</translation>
    </message>
    <message>
        <source>Epoch —</source>
        <translation>轮 —</translation>
    </message>
    <message>
        <source>Loss —</source>
        <translation>损失 —</translation>
    </message>
    <message>
        <source>— img/s</source>
        <translation>— 图像/秒</translation>
    </message>
    <message>
        <source>ETA —</source>
        <translation>剩余 —</translation>
    </message>
    <message>
        <source>unsaved</source>
        <translation>未保存</translation>
    </message>
    <message>
        <source>%1 (%2)[*] — Headroom</source>
        <translation>%1（%2）[*] — Headroom</translation>
    </message>
    <message>
        <source>Unsaved model</source>
        <translation>模型未保存</translation>
    </message>
    <message>
        <source>The model has unsaved changes. Save them first?</source>
        <translation>模型有未保存的更改。要先保存吗？</translation>
    </message>
    <message>
        <source>untitled</source>
        <translation>未命名</translation>
    </message>
    <message>
        <source>Preset</source>
        <translation>预设</translation>
    </message>
    <message>
        <source>Open model</source>
        <translation>打开模型</translation>
    </message>
    <message>
        <source>Model spec (*.json);;All files (*)</source>
        <translation>模型规格 (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Could not open %1:
%2</source>
        <translation>无法打开 %1：
%2</translation>
    </message>
    <message>
        <source>Save model</source>
        <translation>保存模型</translation>
    </message>
    <message>
        <source>Could not save %1:
%2</source>
        <translation>无法保存 %1：
%2</translation>
    </message>
    <message>
        <source>Saved %1</source>
        <translation>已保存 %1</translation>
    </message>
    <message>
        <source>Save model as</source>
        <translation>模型另存为</translation>
    </message>
    <message>
        <source>Model spec (*.json)</source>
        <translation>模型规格 (*.json)</translation>
    </message>
    <message>
        <source>Fix the model first: %1</source>
        <translation>请先修正模型：%1</translation>
    </message>
    <message>
        <source>Cannot start</source>
        <translation>无法开始</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <source>Starting run: %1 on %2</source>
        <translation>开始运行：%1，数据 %2</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>Training…</source>
        <translation>训练中…</translation>
    </message>
    <message>
        <source>Stopping…</source>
        <translation>正在停止…</translation>
    </message>
    <message>
        <source>Step %1/%2</source>
        <translation>第 %1/%2 步</translation>
    </message>
    <message>
        <source>Epoch %1</source>
        <translation>第 %1 轮</translation>
    </message>
    <message>
        <source>Loss %1</source>
        <translation>损失 %1</translation>
    </message>
    <message>
        <source>%1 img/s</source>
        <translation>%1 图像/秒</translation>
    </message>
    <message>
        <source>ETA %1</source>
        <translation>剩余 %1</translation>
    </message>
    <message>
        <source>Epoch %1: training loss %2, test loss %3, test accuracy %4</source>
        <translation>第 %1 轮：训练损失 %2，测试损失 %3，测试准确率 %4</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Training failed</source>
        <translation>训练失败</translation>
    </message>
    <message>
        <source>Stopped after %1 steps</source>
        <translation>在 %1 步后停止</translation>
    </message>
    <message>
        <source>Finished: %1 steps in %2, test accuracy %3</source>
        <translation>已完成：%2 内训练 %1 步，测试准确率 %3</translation>
    </message>
    <message>
        <source>Run %1: %2 steps, %3 img/s</source>
        <translation>运行 %1：%2 步，%3 图像/秒</translation>
    </message>
    <message>
        <source>Training is running</source>
        <translation>训练正在进行</translation>
    </message>
    <message>
        <source>A run is in progress. Stop it and close Headroom?</source>
        <translation>有运行正在进行。要停止它并关闭 Headroom 吗？</translation>
    </message>
    <message>
        <source>Save chart</source>
        <translation>保存图表</translation>
    </message>
    <message>
        <source>PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)</source>
        <translation>PNG 图像 (*.png);;SVG 矢量图 (*.svg);;PDF 文档 (*.pdf)</translation>
    </message>
    <message>
        <source>Could not write %1</source>
        <translation>无法写入 %1</translation>
    </message>
    <message>
        <source>Preferences</source>
        <translation>首选项</translation>
    </message>
    <message>
        <source>System</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>A new language takes effect when Headroom restarts.</source>
        <translation>新的语言在 Headroom 重启后生效。</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <source>Theme</source>
        <translation>主题</translation>
    </message>
    <message>
        <source> Hz</source>
        <translation> 赫兹</translation>
    </message>
    <message>
        <source>How often the charts redraw during a run (at most 25 times a second)</source>
        <translation>运行期间图表的重绘频率（每秒最多 25 次）</translation>
    </message>
    <message>
        <source>Chart refresh rate</source>
        <translation>图表刷新率</translation>
    </message>
    <message>
        <source>&lt;h3&gt;Headroom %1&lt;/h3&gt;&lt;p&gt;A workbench for training neural networks within GPU memory.&lt;/p&gt;&lt;table&gt;&lt;tr&gt;&lt;td&gt;Qt&lt;/td&gt;&lt;td&gt;%2 (built with %3)&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;QCustomPlot&lt;/td&gt;&lt;td&gt;%4&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;CUDA runtime&lt;/td&gt;&lt;td&gt;%5&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;cuDNN&lt;/td&gt;&lt;td&gt;%6&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;NCCL&lt;/td&gt;&lt;td&gt;%7&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;GPU driver&lt;/td&gt;&lt;td&gt;%8&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;</source>
        <translation>&lt;h3&gt;Headroom %1&lt;/h3&gt;&lt;p&gt;在 GPU 显存限制内训练神经网络的工作台。&lt;/p&gt;&lt;table&gt;&lt;tr&gt;&lt;td&gt;Qt&lt;/td&gt;&lt;td&gt;%2（编译时版本 %3）&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;QCustomPlot&lt;/td&gt;&lt;td&gt;%4&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;CUDA 运行时&lt;/td&gt;&lt;td&gt;%5&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;cuDNN&lt;/td&gt;&lt;td&gt;%6&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;NCCL&lt;/td&gt;&lt;td&gt;%7&lt;/td&gt;&lt;/tr&gt;&lt;tr&gt;&lt;td&gt;GPU 驱动&lt;/td&gt;&lt;td&gt;%8&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;</translation>
    </message>
    <message>
        <source>About Headroom</source>
        <translation>关于 Headroom</translation>
    </message>
    <message>
        <source>Runs</source>
        <translation>运行记录</translation>
    </message>
    <message>
        <source>Run history: %1</source>
        <translation>运行记录：%1</translation>
    </message>
    <message numerus="yes">
        <source>%n run(s) interrupted by an earlier crash were marked failed in the history.</source>
        <translation>
            <numerusform>%n 个因先前崩溃而中断的运行已在运行记录中标记为失败。</numerusform>
        </translation>
    </message>
    <message>
        <source>The run history is not available (%1); runs are not recorded.</source>
        <translation>运行记录不可用（%1）；运行将不会被记录。</translation>
    </message>
    <message>
        <source>Hardware monitor: %1</source>
        <translation>硬件监视：%1</translation>
    </message>
    <message>
        <source>&amp;Export report…</source>
        <translation>导出报告(&amp;E)…</translation>
    </message>
    <message>
        <source>Write the report of the selected or last run as HTML, PDF, JSON or CSV</source>
        <translation>将所选或最近一次运行的报告导出为 HTML、PDF、JSON 或 CSV</translation>
    </message>
    <message>
        <source>This run is not recorded in the history: %1</source>
        <translation>本次运行未记入运行记录：%1</translation>
    </message>
    <message>
        <source>Unknown report format &apos;%1&apos;: use .html, .pdf, .json or .csv</source>
        <translation>未知的报告格式“%1”：请使用 .html、.pdf、.json 或 .csv</translation>
    </message>
    <message>
        <source>There is no run %1 in the history.</source>
        <translation>运行记录中没有运行 %1。</translation>
    </message>
    <message>
        <source>Export report</source>
        <translation>导出报告</translation>
    </message>
    <message>
        <source>There is no run to export yet. Start a run, or select one in the Runs tab.</source>
        <translation>还没有可导出的运行。请先开始一次运行，或在“运行记录”页中选择一个运行。</translation>
    </message>
    <message>
        <source>HTML report (*.html)</source>
        <translation>HTML 报告 (*.html)</translation>
    </message>
    <message>
        <source>PDF document (*.pdf)</source>
        <translation>PDF 文档 (*.pdf)</translation>
    </message>
    <message>
        <source>JSON data (*.json)</source>
        <translation>JSON 数据 (*.json)</translation>
    </message>
    <message>
        <source>CSV metrics (*.csv)</source>
        <translation>CSV 指标 (*.csv)</translation>
    </message>
    <message>
        <source>Export report of &quot;%1&quot;</source>
        <translation>导出“%1”的报告</translation>
    </message>
    <message>
        <source>Report written to %1</source>
        <translation>报告已写入 %1</translation>
    </message>
    <message>
        <source>Report of run &quot;%1&quot; written to %2</source>
        <translation>运行“%1”的报告已写入 %2</translation>
    </message>
    <message>
        <source>Load into builder</source>
        <translation>载入构建器</translation>
    </message>
    <message>
        <source>Stop the run in progress first.</source>
        <translation>请先停止正在进行的运行。</translation>
    </message>
    <message>
        <source>The run &quot;%1&quot; cannot be loaded: %2</source>
        <translation>无法载入运行“%1”：%2</translation>
    </message>
    <message>
        <source>Loaded the model and settings of run &quot;%1&quot;</source>
        <translation>已载入运行“%1”的模型和设置</translation>
    </message>
    <message>
        <source> ms</source>
        <translation> 毫秒</translation>
    </message>
    <message>
        <source>How often the hardware monitor reads GPU and host figures (100 ms to 10 s)</source>
        <translation>硬件监视读取 GPU 与主机数据的间隔（100 毫秒到 10 秒）</translation>
    </message>
    <message>
        <source>Hardware sampling interval</source>
        <translation>硬件采样间隔</translation>
    </message>
    <message>
        <source>Notifications</source>
        <translation>通知</translation>
    </message>
    <message>
        <source>https://… (empty: no webhook)</source>
        <translation>https://…（留空：不使用 Webhook）</translation>
    </message>
    <message>
        <source>Webhook URL</source>
        <translation>Webhook 地址</translation>
    </message>
    <message>
        <source>Generic JSON</source>
        <translation>通用 JSON</translation>
    </message>
    <message>
        <source>WeCom (企业微信)</source>
        <translation>企业微信</translation>
    </message>
    <message>
        <source>DingTalk (钉钉)</source>
        <translation>钉钉</translation>
    </message>
    <message>
        <source>Feishu / Lark (飞书)</source>
        <translation>飞书</translation>
    </message>
    <message>
        <source>Slack</source>
        <translation>Slack</translation>
    </message>
    <message>
        <source>Message format</source>
        <translation>消息格式</translation>
    </message>
    <message>
        <source>When a run finishes or is stopped</source>
        <translation>运行完成或被停止时</translation>
    </message>
    <message>
        <source>When a run fails</source>
        <translation>运行失败时</translation>
    </message>
    <message>
        <source>never</source>
        <translation>从不</translation>
    </message>
    <message>
        <source>every </source>
        <translation>每 </translation>
    </message>
    <message>
        <source> epochs</source>
        <translation> 轮</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <source>Progress</source>
        <translation>进度</translation>
    </message>
    <message>
        <source>Send a test message</source>
        <translation>发送测试消息</translation>
    </message>
    <message>
        <source>Webhook test message delivered (HTTP %1)</source>
        <translation>Webhook 测试消息已送达（HTTP %1）</translation>
    </message>
    <message>
        <source>Webhook test message delivered</source>
        <translation>Webhook 测试消息已送达</translation>
    </message>
    <message>
        <source>Headroom: test message</source>
        <translation>Headroom：测试消息</translation>
    </message>
    <message>
        <source>Notifications from Headroom arrive here.</source>
        <translation>Headroom 的通知会发送到这里。</translation>
    </message>
    <message>
        <source>Show a desktop notification when a run ends</source>
        <translation>运行结束时显示桌面通知</translation>
    </message>
    <message>
        <source>This desktop has no system tray for notifications</source>
        <translation>当前桌面没有可显示通知的系统托盘</translation>
    </message>
    <message>
        <source>No memory prediction for this run: %1</source>
        <translation>本次运行没有显存预测：%1</translation>
    </message>
    <message>
        <source>Out of memory</source>
        <translation>显存不足</translation>
    </message>
    <message>
        <source>Memory plan</source>
        <translation>显存规划</translation>
    </message>
    <message>
        <source>Predicted memory of the current model and setup, per category and per layer</source>
        <translation>当前模型和设置的预测显存，按类别和逐层显示</translation>
    </message>
    <message>
        <source>Memory strategies applied from the planner</source>
        <translation>已应用规划器给出的显存策略</translation>
    </message>
    <message>
        <source>Predicted against measured memory of this run: see the Memory plan tab</source>
        <translation>本次运行的预测与实测显存对比：见“显存规划”页</translation>
    </message>
</context>
<context>
    <name>hrapp::MemoryPlanPanel</name>
    <message>
        <source>checkpoint %1/%2 blocks</source>
        <translation>梯度检查点 %1/%2 个块</translation>
    </message>
    <message>
        <source>micro-batch %1 × %2</source>
        <translation>微批次 %1 × %2</translation>
    </message>
    <message>
        <source>optimizer offload</source>
        <translation>优化器卸载</translation>
    </message>
    <message>
        <source>Fit to device</source>
        <translation>适配设备</translation>
    </message>
    <message>
        <source>Search precision, checkpointing, micro-batches and optimizer offload for the fastest configuration that fits the memory limit (or the device&apos;s free memory) and apply it</source>
        <translation>在混合精度、梯度检查点、微批次和优化器卸载中搜索能放入显存上限（或设备可用显存）的最快配置，并应用它</translation>
    </message>
    <message>
        <source>Show the ranking</source>
        <translation>显示排名</translation>
    </message>
    <message>
        <source>Strategy</source>
        <translation>策略</translation>
    </message>
    <message>
        <source>Device memory</source>
        <translation>设备显存</translation>
    </message>
    <message>
        <source>Host memory</source>
        <translation>主机内存</translation>
    </message>
    <message>
        <source>Step time</source>
        <translation>每步耗时</translation>
    </message>
    <message>
        <source>Verdict</source>
        <translation>结论</translation>
    </message>
    <message>
        <source>Hide the ranking</source>
        <translation>隐藏排名</translation>
    </message>
    <message>
        <source>Last run: predicted against measured</source>
        <translation>上次运行：预测与实测对比</translation>
    </message>
    <message>
        <source>Category</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>Predicted</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <source>Difference</source>
        <translation>差值</translation>
    </message>
    <message>
        <source>Per layer</source>
        <translation>逐层</translation>
    </message>
    <message>
        <source>Layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Block</source>
        <translation>块</translation>
    </message>
    <message>
        <source>Checkpointed</source>
        <translation>梯度检查点</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>No model yet.</source>
        <translation>还没有模型。</translation>
    </message>
    <message>
        <source>The model has no layers yet: add some in the model builder to see its memory plan.</source>
        <translation>模型还没有层：请在模型构建器中添加层以查看显存规划。</translation>
    </message>
    <message>
        <source>The model is not valid, so there is no memory plan: %1</source>
        <translation>模型无效，因此没有显存规划：%1</translation>
    </message>
    <message>
        <source>No memory plan for these settings: %1</source>
        <translation>这些设置没有显存规划：%1</translation>
    </message>
    <message>
        <source>the CPU (main memory)</source>
        <translation>CPU（主内存）</translation>
    </message>
    <message>
        <source>the memory limit of %1</source>
        <translation>%1 的显存上限</translation>
    </message>
    <message>
        <source>Memory limit</source>
        <translation>显存上限</translation>
    </message>
    <message>
        <source>%1 free RAM (of %2)</source>
        <translation>可用内存 %1（共 %2）</translation>
    </message>
    <message>
        <source>Free RAM</source>
        <translation>可用内存</translation>
    </message>
    <message>
        <source>%1 free (of %2)</source>
        <translation>可用 %1（共 %2）</translation>
    </message>
    <message>
        <source>Free memory</source>
        <translation>可用显存</translation>
    </message>
    <message>
        <source>the device&apos;s capacity is unknown</source>
        <translation>设备容量未知</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:#2ca02c&apos;&gt;&lt;b&gt;fits&lt;/b&gt;&lt;/span&gt; in %1</source>
        <translation>&lt;span style=&apos;color:#2ca02c&apos;&gt;&lt;b&gt;放得下&lt;/b&gt;&lt;/span&gt;（%1 以内）</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:#d62728&apos;&gt;&lt;b&gt;does not fit&lt;/b&gt;&lt;/span&gt; in %1: %2 too much. Try &lt;i&gt;Fit to device&lt;/i&gt;.</source>
        <translation>&lt;span style=&apos;color:#d62728&apos;&gt;&lt;b&gt;放不下&lt;/b&gt;&lt;/span&gt;（%1）：超出 %2。请试试&lt;i&gt;适配设备&lt;/i&gt;。</translation>
    </message>
    <message>
        <source>Predicted peak on %1: &lt;b&gt;%2&lt;/b&gt; — %3</source>
        <translation>%1 上的预测峰值：&lt;b&gt;%2&lt;/b&gt; — %3</translation>
    </message>
    <message>
        <source>%1 · batch %2 · %3 optimizer</source>
        <translation>%1 · 批大小 %2 · %3 优化器</translation>
    </message>
    <message>
        <source> · %1 of optimizer state in host memory</source>
        <translation> · 主机内存中有 %1 优化器状态</translation>
    </message>
    <message>
        <source>Predicted step time: &lt;b&gt;%1×&lt;/b&gt; the FP32 step without strategies (about %2 ms here)</source>
        <translation>预测每步耗时：不用策略的 FP32 单步的 &lt;b&gt;%1 倍&lt;/b&gt;（此处约 %2 毫秒）</translation>
    </message>
    <message>
        <source>; recomputation adds %1% forward work</source>
        <translation>；重计算增加 %1% 的前向计算量</translation>
    </message>
    <message>
        <source>; offload moves %1 per step</source>
        <translation>；卸载每步传输 %1</translation>
    </message>
    <message>
        <source>; recompute buffer %1</source>
        <translation>；重计算缓冲区 %1</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>recomputed</source>
        <translation>重计算</translation>
    </message>
    <message>
        <source>Fit to device failed: %1</source>
        <translation>适配设备失败：%1</translation>
    </message>
    <message>
        <source>Nothing fits in %1 at batch %2: lower the batch size or raise the memory limit.</source>
        <translation>批大小 %2 时没有任何配置能放入 %1：请减小批大小或提高显存上限。</translation>
    </message>
    <message>
        <source>best: fits, fastest</source>
        <translation>最佳：放得下，最快</translation>
    </message>
    <message>
        <source>fits, %1% slower than the best</source>
        <translation>放得下，比最佳慢 %1%</translation>
    </message>
    <message>
        <source>does not fit: %1 over the budget</source>
        <translation>放不下：超出预算 %1</translation>
    </message>
    <message>
        <source>Total</source>
        <translation>合计</translation>
    </message>
    <message>
        <source>%1 (host)</source>
        <translation>%1（主机）</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Run with %1: the planner&apos;s prediction at Start against the ledger&apos;s measured peaks (%2 steps, %3).</source>
        <translation>使用 %1 的运行：开始时规划器的预测与账本实测峰值对比（%2 步，%3）。</translation>
    </message>
    <message>
        <source>All candidates</source>
        <translation>全部候选</translation>
    </message>
    <message>
        <source>Also list the configurations that another one beats (no larger and no slower) and those that do not fit</source>
        <translation>同时列出被其他配置全面胜过（不比它大也不比它慢）的配置和放不下的配置</translation>
    </message>
    <message>
        <source>Searching precision, checkpointing, micro-batches and offload for %1…</source>
        <translation>正在为 %1 搜索精度、梯度检查点、微批次和卸载的组合…</translation>
    </message>
    <message numerus="yes">
        <source>Applied the fastest configuration that fits in %1: %2 (predicted %3, %4× step time). %n other configuration(s) trade speed for memory.</source>
        <translation>
            <numerusform>已应用能放进 %1 的最快配置：%2（预测 %3，每步时间 %4×）。另有 %n 个配置以速度换取内存。</numerusform>
        </translation>
    </message>
    <message>
        <source>fits in less memory, %1% slower than the best</source>
        <translation>放得下且更省内存，比最佳慢 %1%</translation>
    </message>
    <message>
        <source>fits, %1% slower; %2 needs no more memory and is no slower</source>
        <translation>放得下，慢 %1%；%2 占用不多于它且不比它慢</translation>
    </message>
</context>
<context>
    <name>hrapp::MonitorView</name>
    <message>
        <source>Test accuracy</source>
        <translation>测试准确率</translation>
    </message>
    <message>
        <source>Training loss</source>
        <translation>训练损失</translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation>吞吐量</translation>
    </message>
    <message>
        <source>Peak memory</source>
        <translation>显存峰值</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Training (per step)</source>
        <translation>训练（每步）</translation>
    </message>
    <message>
        <source>Training (smoothed)</source>
        <translation>训练（平滑）</translation>
    </message>
    <message>
        <source>Validation</source>
        <translation>验证</translation>
    </message>
    <message>
        <source>Accuracy</source>
        <translation>准确率</translation>
    </message>
    <message>
        <source>accuracy (%)</source>
        <translation>准确率（%）</translation>
    </message>
    <message>
        <source>images/s</source>
        <translation>图像/秒</translation>
    </message>
    <message>
        <source>Images per second</source>
        <translation>每秒图像数</translation>
    </message>
    <message>
        <source>Memory by category</source>
        <translation>按类别的显存占用</translation>
    </message>
    <message>
        <source>MiB</source>
        <translation>MiB</translation>
    </message>
    <message>
        <source>%1 img/s</source>
        <translation>%1 图像/秒</translation>
    </message>
</context>
<context>
    <name>hrapp::OutOfMemoryDialog</name>
    <message>
        <source>Out of memory</source>
        <translation>显存不足</translation>
    </message>
    <message>
        <source>&lt;b&gt;The run ran out of memory&lt;/b&gt; (%1 available on the device%2). The trainer reported:</source>
        <translation>&lt;b&gt;运行显存不足&lt;/b&gt;（设备上可用 %1%2）。训练器报告：</translation>
    </message>
    <message>
        <source>, the memory limit</source>
        <translation>，即显存上限</translation>
    </message>
    <message>
        <source>The planner could not search for a configuration: %1</source>
        <translation>规划器无法搜索配置：%1</translation>
    </message>
    <message>
        <source>precision %1</source>
        <translation>精度 %1</translation>
    </message>
    <message>
        <source>no checkpointing</source>
        <translation>不做梯度检查点</translation>
    </message>
    <message numerus="yes">
        <source>checkpointing %n block(s)</source>
        <translation>
            <numerusform>对 %n 个块做梯度检查点</numerusform>
        </translation>
    </message>
    <message>
        <source>micro-batch %1 × %2 accumulation steps</source>
        <translation>微批次 %1 × %2 步梯度累积</translation>
    </message>
    <message>
        <source>the whole batch at once</source>
        <translation>整个批次一次完成</translation>
    </message>
    <message>
        <source>optimizer state in host memory</source>
        <translation>优化器状态在主机内存中</translation>
    </message>
    <message>
        <source>optimizer state on the device</source>
        <translation>优化器状态在设备上</translation>
    </message>
    <message>
        <source>&lt;p&gt;The planner&apos;s fastest configuration that fits in %1 at batch %2 is predicted to need &lt;b&gt;%3&lt;/b&gt; at &lt;b&gt;%4×&lt;/b&gt; the step time:&lt;/p&gt;&lt;p&gt;&lt;b&gt;%5&lt;/b&gt;&lt;/p&gt;&lt;p&gt;Command line: &lt;code&gt;headroom train --batch %2 %6&lt;/code&gt;&lt;/p&gt;</source>
        <translation>&lt;p&gt;规划器给出的、批大小 %2 时能放入 %1 的最快配置预计需要 &lt;b&gt;%3&lt;/b&gt;，每步耗时为 &lt;b&gt;%4 倍&lt;/b&gt;：&lt;/p&gt;&lt;p&gt;&lt;b&gt;%5&lt;/b&gt;&lt;/p&gt;&lt;p&gt;命令行：&lt;code&gt;headroom train --batch %2 %6&lt;/code&gt;&lt;/p&gt;</translation>
    </message>
    <message>
        <source>No combination of precision, checkpointing, micro-batches and offload fits in %1 at batch %2. Lower the batch size, make the model smaller or raise the memory limit.</source>
        <translation>批大小 %2 时，混合精度、梯度检查点、微批次和卸载的任何组合都放不进 %1。请减小批大小、缩小模型或提高显存上限。</translation>
    </message>
    <message>
        <source>Apply and restart</source>
        <translation>应用并重新开始</translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>应用</translation>
    </message>
    <message>
        <source>Searching for a configuration that fits in %1…</source>
        <translation>正在搜索能放进 %1 的配置…</translation>
    </message>
</context>
<context>
    <name>hrapp::PlanSearchTask</name>
    <message>
        <source>the planner failed</source>
        <translation>规划器出错</translation>
    </message>
</context>
<context>
    <name>hrapp::RunsView</name>
    <message>
        <source>Filter by name, model, data or device</source>
        <translation>按名称、模型、数据或设备筛选</translation>
    </message>
    <message>
        <source>All statuses</source>
        <translation>全部状态</translation>
    </message>
    <message>
        <source>Finished</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Started</source>
        <translation>开始时间</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>时长</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Test accuracy</source>
        <translation>测试准确率</translation>
    </message>
    <message>
        <source>Select one run to see its charts, several to compare them; double-click a name to rename</source>
        <translation>选择一个运行查看其图表，选择多个进行对比；双击名称可重命名</translation>
    </message>
    <message>
        <source>No runs recorded yet. Every run started with Start (F5) or `headroom train` is kept here.</source>
        <translation>还没有运行记录。用“开始”（F5）或 `headroom train` 启动的每次运行都会保存在这里。</translation>
    </message>
    <message>
        <source>Rename</source>
        <translation>重命名</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>删除…</translation>
    </message>
    <message>
        <source>Load into builder</source>
        <translation>载入构建器</translation>
    </message>
    <message>
        <source>Put the run&apos;s model and training settings back into the builder and setup panels</source>
        <translation>将该运行的模型和训练设置放回构建器和训练设置面板</translation>
    </message>
    <message>
        <source>Export report…</source>
        <translation>导出报告…</translation>
    </message>
    <message>
        <source>Training loss</source>
        <translation>训练损失</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>epoch</source>
        <translation>轮</translation>
    </message>
    <message>
        <source>accuracy (%)</source>
        <translation>准确率（%）</translation>
    </message>
    <message>
        <source>Throughput</source>
        <translation>吞吐量</translation>
    </message>
    <message>
        <source>images/s</source>
        <translation>图像/秒</translation>
    </message>
    <message>
        <source>Memory allocated (ledger)</source>
        <translation>已分配显存（账本）</translation>
    </message>
    <message>
        <source>MiB</source>
        <translation>MiB</translation>
    </message>
    <message>
        <source>Run %1: %2 on %3</source>
        <translation>运行 %1：%2，数据 %3</translation>
    </message>
    <message>
        <source>No run matches the filter.</source>
        <translation>没有符合筛选条件的运行。</translation>
    </message>
    <message>
        <source>The run history is not available: %1</source>
        <translation>运行记录不可用：%1</translation>
    </message>
    <message>
        <source>Showing the first %1 of %2 selected runs</source>
        <translation>显示所选 %2 个运行中的前 %1 个</translation>
    </message>
    <message>
        <source>Comparing %1 runs</source>
        <translation>正在对比 %1 个运行</translation>
    </message>
    <message>
        <source>Rename run</source>
        <translation>重命名运行</translation>
    </message>
    <message>
        <source>A run&apos;s name cannot be empty.</source>
        <translation>运行名称不能为空。</translation>
    </message>
    <message>
        <source>Delete runs</source>
        <translation>删除运行</translation>
    </message>
    <message>
        <source>The run in progress cannot be deleted; stop it first.</source>
        <translation>无法删除正在进行的运行；请先停止它。</translation>
    </message>
    <message>
        <source>Delete the run &quot;%1&quot; and everything recorded for it? This cannot be undone.</source>
        <translation>删除运行“%1”及其全部记录？此操作无法撤销。</translation>
    </message>
    <message>
        <source>Delete %1 runs and everything recorded for them? This cannot be undone.</source>
        <translation>删除这 %1 个运行及其全部记录？此操作无法撤销。</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Delete %1 runs…</source>
        <translation>删除 %1 个运行…</translation>
    </message>
    <message>
        <source>Rename the selected run (F2, or double-click its name)</source>
        <translation>重命名所选运行（F2，或双击名称）</translation>
    </message>
    <message>
        <source>Delete the selected runs and everything recorded for them (Delete)</source>
        <translation>删除所选运行及其全部记录（Delete 键）</translation>
    </message>
</context>
<context>
    <name>hrapp::RuntimeInfo</name>
    <message>
        <source>not found</source>
        <translation>未找到</translation>
    </message>
    <message>
        <source>CPU (%1 threads)</source>
        <translation>CPU（%1 线程）</translation>
    </message>
</context>
<context>
    <name>hrapp::TrainingSetupPanel</name>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>CUDA devices appear here when the CUDA backend reports them</source>
        <translation>CUDA 后端报告设备后，CUDA 设备会出现在这里</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>all cores</source>
        <translation>全部核心</translation>
    </message>
    <message>
        <source>CPU threads</source>
        <translation>CPU 线程数</translation>
    </message>
    <message>
        <source>Batch size</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>Epochs</source>
        <translation>轮数</translation>
    </message>
    <message>
        <source>by epochs</source>
        <translation>按轮数</translation>
    </message>
    <message>
        <source>Train this many steps instead of whole epochs (0: use epochs)</source>
        <translation>训练指定步数而不是完整的轮数（0：按轮数）</translation>
    </message>
    <message>
        <source>Steps</source>
        <translation>步数</translation>
    </message>
    <message>
        <source>Evaluate on the test set after each epoch</source>
        <translation>每轮结束后在测试集上评估</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>SGD</source>
        <translation>SGD</translation>
    </message>
    <message>
        <source>Adam</source>
        <translation>Adam</translation>
    </message>
    <message>
        <source>AdamW</source>
        <translation>AdamW</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>Momentum</source>
        <translation>动量</translation>
    </message>
    <message>
        <source>Nesterov</source>
        <translation>Nesterov 动量</translation>
    </message>
    <message>
        <source>Weight decay</source>
        <translation>权重衰减</translation>
    </message>
    <message>
        <source>β₁</source>
        <translation>β₁</translation>
    </message>
    <message>
        <source>β₂</source>
        <translation>β₂</translation>
    </message>
    <message>
        <source>Learning-rate schedule</source>
        <translation>学习率调度</translation>
    </message>
    <message>
        <source>Constant</source>
        <translation>常数</translation>
    </message>
    <message>
        <source>Step decay</source>
        <translation>阶梯衰减</translation>
    </message>
    <message>
        <source>Cosine</source>
        <translation>余弦</translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation>调度方式</translation>
    </message>
    <message>
        <source>Warm-up steps</source>
        <translation>预热步数</translation>
    </message>
    <message>
        <source>Step size</source>
        <translation>衰减间隔步数</translation>
    </message>
    <message>
        <source>Decay factor γ</source>
        <translation>衰减系数 γ</translation>
    </message>
    <message>
        <source>Minimum rate</source>
        <translation>最小学习率</translation>
    </message>
    <message>
        <source>Memory strategies</source>
        <translation>显存策略</translation>
    </message>
    <message>
        <source>FP32 (full precision)</source>
        <translation>FP32（全精度）</translation>
    </message>
    <message>
        <source>TF32 matmuls</source>
        <translation>TF32 矩阵乘法</translation>
    </message>
    <message>
        <source>BF16 mixed precision</source>
        <translation>BF16 混合精度</translation>
    </message>
    <message>
        <source>FP16 mixed precision + loss scaling</source>
        <translation>FP16 混合精度 + 损失缩放</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>None</source>
        <translation>无</translation>
    </message>
    <message>
        <source>K = </source>
        <translation>K = </translation>
    </message>
    <message>
        <source>Gradient checkpointing</source>
        <translation>梯度检查点</translation>
    </message>
    <message>
        <source>whole batch</source>
        <translation>整个批次</translation>
    </message>
    <message>
        <source>Micro-batch</source>
        <translation>微批大小</translation>
    </message>
    <message>
        <source>Gradient accumulation</source>
        <translation>梯度累积</translation>
    </message>
    <message>
        <source>Optimizer state in host memory</source>
        <translation>优化器状态放在主机内存</translation>
    </message>
    <message>
        <source>Offload</source>
        <translation>卸载</translation>
    </message>
    <message>
        <source>ZeRO-1 (optimizer state)</source>
        <translation>ZeRO-1（优化器状态）</translation>
    </message>
    <message>
        <source>ZeRO-2 (+ gradients)</source>
        <translation>ZeRO-2（+ 梯度）</translation>
    </message>
    <message>
        <source>ZeRO-3 (+ parameters)</source>
        <translation>ZeRO-3（+ 参数）</translation>
    </message>
    <message>
        <source>Sharding</source>
        <translation>分片</translation>
    </message>
    <message>
        <source>All blocks</source>
        <translation>所有块</translation>
    </message>
    <message>
        <source>Every 2nd block</source>
        <translation>每隔一个块</translation>
    </message>
    <message>
        <source>Every K-th block</source>
        <translation>每 K 个块</translation>
    </message>
    <message>
        <source>Automatic (fit the memory)</source>
        <translation>自动（适配显存）</translation>
    </message>
    <message>
        <source>Chosen blocks…</source>
        <translation>选定的块…</translation>
    </message>
    <message>
        <source>Checkpointed blocks keep only their input; backward recomputes them (less activation memory, more compute)</source>
        <translation>做梯度检查点的块只保留输入；反向传播时重新计算（激活显存更少，计算更多）</translation>
    </message>
    <message>
        <source>Tick the blocks to checkpoint</source>
        <translation>勾选要做梯度检查点的块</translation>
    </message>
    <message>
        <source>Samples per forward/backward pass; the batch is split into micro-batches whose gradients are accumulated</source>
        <translation>每次前向/反向传播的样本数；批次被拆成多个微批次并累积梯度</translation>
    </message>
    <message>
        <source>Micro-batches per optimizer step (with a micro-batch size: batch = micro-batch × steps)</source>
        <translation>每个优化器步的微批次数（指定微批大小时：批大小 = 微批次 × 步数）</translation>
    </message>
    <message>
        <source>Optimizer state and master weights live in host memory; the update runs on the CPU</source>
        <translation>优化器状态和主权重放在主机内存中；参数更新在 CPU 上进行</translation>
    </message>
    <message>
        <source> MiB</source>
        <translation> MiB</translation>
    </message>
    <message>
        <source>the device&apos;s own</source>
        <translation>设备自身容量</translation>
    </message>
    <message>
        <source>Cap the device memory the run may use, like a smaller card; a run that needs more fails with an out-of-memory error</source>
        <translation>限制运行可用的设备显存，模拟更小的显卡；需要更多显存的运行会以显存不足错误失败</translation>
    </message>
    <message>
        <source>Memory limit</source>
        <translation>显存上限</translation>
    </message>
    <message>
        <source>multi-GPU sharding needs the CUDA backend and several GPUs</source>
        <translation>多 GPU 分片需要 CUDA 后端和多块 GPU</translation>
    </message>
    <message>
        <source>Block %1: layers %2</source>
        <translation>块 %1：层 %2</translation>
    </message>
</context>
<context>
    <name>hrw::LiveChart</name>
    <message>
        <source>Reset view</source>
        <translation>重置视图</translation>
    </message>
    <message>
        <source>Show legend</source>
        <translation>显示图例</translation>
    </message>
    <message>
        <source>Save chart as…</source>
        <translation>图表另存为…</translation>
    </message>
</context>
<context>
    <name>hrw::MemoryChart</name>
    <message>
        <source>Capacity</source>
        <translation>容量</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>Optimizer state</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>Workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>Data</source>
        <translation>数据</translation>
    </message>
    <message>
        <source>Other</source>
        <translation>其他</translation>
    </message>
    <message>
        <source>Device capacity %1 GiB (above this view)</source>
        <translation>设备容量 %1 GiB（超出当前视图）</translation>
    </message>
</context>
<context>
    <name>hrw::MemoryCompareChart</name>
    <message>
        <source>Predicted</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>实测</translation>
    </message>
</context>
<context>
    <name>hrw::ModelBuilder</name>
    <message>
        <source>Convolution</source>
        <translation>卷积</translation>
    </message>
    <message>
        <source>Pooling</source>
        <translation>池化</translation>
    </message>
    <message>
        <source>Linear</source>
        <translation>全连接</translation>
    </message>
    <message>
        <source>Activation</source>
        <translation>激活</translation>
    </message>
    <message>
        <source>Normalisation</source>
        <translation>归一化</translation>
    </message>
    <message>
        <source>Regularisation</source>
        <translation>正则化</translation>
    </message>
    <message>
        <source>Structure</source>
        <translation>结构</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失函数</translation>
    </message>
    <message>
        <source>%1 B</source>
        <translation>%1 B</translation>
    </message>
    <message>
        <source>%1 KiB</source>
        <translation>%1 KiB</translation>
    </message>
    <message>
        <source>%1 MiB</source>
        <translation>%1 MiB</translation>
    </message>
    <message>
        <source>%1 GiB</source>
        <translation>%1 GiB</translation>
    </message>
    <message>
        <source>%1 K</source>
        <translation>%1 K</translation>
    </message>
    <message>
        <source>%1 M</source>
        <translation>%1 M</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Input (C×H×W)</source>
        <translation>输入（C×H×W）</translation>
    </message>
    <message>
        <source>Classes</source>
        <translation>类别数</translation>
    </message>
    <message>
        <source>Cross-entropy</source>
        <translation>交叉熵</translation>
    </message>
    <message>
        <source>Mean squared error</source>
        <translation>均方误差</translation>
    </message>
    <message>
        <source>Label smoothing (cross-entropy only)</source>
        <translation>标签平滑（仅交叉熵）</translation>
    </message>
    <message>
        <source>Layer palette</source>
        <translation>层面板</translation>
    </message>
    <message>
        <source>Search layers…</source>
        <translation>搜索层…</translation>
    </message>
    <message>
        <source>Double-click a layer type to add it after the selected layer</source>
        <translation>双击层类型，将其添加到所选层之后</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Add the palette&apos;s selected layer after the selected layer</source>
        <translation>将层面板中选中的层添加到所选层之后</translation>
    </message>
    <message>
        <source>Insert</source>
        <translation>插入</translation>
    </message>
    <message>
        <source>Insert the palette&apos;s selected layer before the selected layer</source>
        <translation>将层面板中选中的层插入到所选层之前</translation>
    </message>
    <message>
        <source>Remove the selected layer</source>
        <translation>删除所选层</translation>
    </message>
    <message>
        <source>Move the selected layer up</source>
        <translation>上移所选层</translation>
    </message>
    <message>
        <source>Move the selected layer down</source>
        <translation>下移所选层</translation>
    </message>
    <message>
        <source>Duplicate the selected layer</source>
        <translation>复制所选层</translation>
    </message>
    <message>
        <source>Residual</source>
        <translation>残差</translation>
    </message>
    <message>
        <source>Group the selected layer into a residual block (output = input + block(input))</source>
        <translation>将所选层组合为残差块（输出 = 输入 + 块(输入)）</translation>
    </message>
    <message>
        <source>Layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Params</source>
        <translation>参数量</translation>
    </message>
    <message>
        <source>Act./sample</source>
        <translation>激活/样本</translation>
    </message>
    <message>
        <source>Bytes this layer keeps for the backward pass, per sample (fp32)</source>
        <translation>该层为反向传播保留的每样本字节数（fp32）</translation>
    </message>
    <message>
        <source>Add %1</source>
        <translation>添加 %1</translation>
    </message>
    <message>
        <source>Insert %1</source>
        <translation>插入 %1</translation>
    </message>
    <message>
        <source>Remove %1</source>
        <translation>删除 %1</translation>
    </message>
    <message>
        <source>Move up</source>
        <translation>上移</translation>
    </message>
    <message>
        <source>Move down</source>
        <translation>下移</translation>
    </message>
    <message>
        <source>Move layer</source>
        <translation>移动层</translation>
    </message>
    <message>
        <source>Duplicate %1</source>
        <translation>复制 %1</translation>
    </message>
    <message>
        <source>Group into residual block</source>
        <translation>组合为残差块</translation>
    </message>
    <message>
        <source>Set %1</source>
        <translation>设置 %1</translation>
    </message>
    <message>
        <source>Rename layer</source>
        <translation>重命名层</translation>
    </message>
    <message>
        <source>Rename model</source>
        <translation>重命名模型</translation>
    </message>
    <message>
        <source>Change input shape</source>
        <translation>更改输入形状</translation>
    </message>
    <message>
        <source>Change classes</source>
        <translation>更改类别数</translation>
    </message>
    <message>
        <source>Change loss</source>
        <translation>更改损失函数</translation>
    </message>
    <message>
        <source>Input %1 → output %2</source>
        <translation>输入 %1 → 输出 %2</translation>
    </message>
    <message>
        <source>shortcut: identity</source>
        <translation>捷径：恒等映射</translation>
    </message>
    <message>
        <source>shortcut</source>
        <translation>捷径</translation>
    </message>
    <message>
        <source>Select and press Add to put a projection on the shortcut</source>
        <translation>选中后按“添加”可在捷径上加入投影层</translation>
    </message>
    <message>
        <source>Empty model: pick a preset from the Model menu or add layers from the palette.</source>
        <translation>空模型：请从“模型”菜单选择预设，或从层面板添加层。</translation>
    </message>
    <message>
        <source>Invalid model: %1</source>
        <translation>模型无效：%1</translation>
    </message>
    <message>
        <source>%1 parameters · %2 activations per sample · output %3</source>
        <translation>%1 个参数 · 每样本激活值 %2 · 输出 %3</translation>
    </message>
    <message>
        <source>Properties</source>
        <translation>属性</translation>
    </message>
    <message>
        <source>Select a layer to edit its properties.</source>
        <translation>选择一个层以编辑其属性。</translation>
    </message>
    <message>
        <source>Properties: %1</source>
        <translation>属性：%1</translation>
    </message>
    <message>
        <source>optional label</source>
        <translation>可选标签</translation>
    </message>
    <message>
        <source>Label</source>
        <translation>标签</translation>
    </message>
    <message>
        <source>layer %1 (%2): %3</source>
        <translation>第 %1 层（%2）：%3</translation>
    </message>
</context>
<context>
    <name>hrw::PlanBarChart</name>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>Optimizer state</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>Master weights</source>
        <translation>主权重</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>激活值</translation>
    </message>
    <message>
        <source>Workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>Data</source>
        <translation>数据</translation>
    </message>
    <message>
        <source>Communication</source>
        <translation>通信</translation>
    </message>
    <message>
        <source>Other</source>
        <translation>其他</translation>
    </message>
    <message>
        <source>GiB</source>
        <translation>GiB</translation>
    </message>
    <message>
        <source>MiB</source>
        <translation>MiB</translation>
    </message>
    <message>
        <source>KiB</source>
        <translation>KiB</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>%1 (off the scale →)</source>
        <translation>%1（超出刻度 →）</translation>
    </message>
</context>
<context>
    <name>layer.avgpool2d</name>
    <message>
        <source>mean over square windows (padding counted)</source>
        <translation>方形窗口内取平均（计入填充）</translation>
    </message>
</context>
<context>
    <name>layer.avgpool2d.kernel_size</name>
    <message>
        <source>window size</source>
        <translation>窗口大小</translation>
    </message>
</context>
<context>
    <name>layer.avgpool2d.padding</name>
    <message>
        <source>zero padding on each side</source>
        <translation>每侧补零</translation>
    </message>
</context>
<context>
    <name>layer.avgpool2d.stride</name>
    <message>
        <source>step between windows (0: kernel_size)</source>
        <translation>窗口间步长（0：等于 kernel_size）</translation>
    </message>
</context>
<context>
    <name>layer.batchnorm2d</name>
    <message>
        <source>normalises each channel over (N, H, W) with batch statistics</source>
        <translation>用批次统计量在 (N, H, W) 上对每个通道做归一化</translation>
    </message>
</context>
<context>
    <name>layer.batchnorm2d.eps</name>
    <message>
        <source>added to the variance</source>
        <translation>加到方差上的小量</translation>
    </message>
</context>
<context>
    <name>layer.batchnorm2d.momentum</name>
    <message>
        <source>running statistics update rate</source>
        <translation>滑动统计量的更新率</translation>
    </message>
</context>
<context>
    <name>layer.batchnorm2d.num_features</name>
    <message>
        <source>channels C</source>
        <translation>通道数 C</translation>
    </message>
</context>
<context>
    <name>layer.conv2d</name>
    <message>
        <source>2-D convolution over (N, C, H, W) (groups = 1)</source>
        <translation>对 (N, C, H, W) 做二维卷积（groups = 1）</translation>
    </message>
</context>
<context>
    <name>layer.conv2d.bias</name>
    <message>
        <source>learn an additive bias per output channel</source>
        <translation>为每个输出通道学习一个加性偏置</translation>
    </message>
</context>
<context>
    <name>layer.conv2d.dilation</name>
    <message>
        <source>spacing between kernel taps</source>
        <translation>卷积核采样点之间的间距</translation>
    </message>
</context>
<context>
    <name>layer.conv2d.in_channels</name>
    <message>
        <source>input channels C</source>
        <translation>输入通道数 C</translation>
    </message>
</context>
<context>
    <name>layer.conv2d.kernel_size</name>
    <message>
        <source>square kernel size</source>
        <translation>方形卷积核大小</translation>
    </message>
</context>
<context>
    <name>layer.conv2d.out_channels</name>
    <message>
        <source>output channels (filters)</source>
        <translation>输出通道数（滤波器个数）</translation>
    </message>
</context>
<context>
    <name>layer.conv2d.padding</name>
    <message>
        <source>zero padding on each side</source>
        <translation>每侧补零</translation>
    </message>
</context>
<context>
    <name>layer.conv2d.stride</name>
    <message>
        <source>step between windows</source>
        <translation>窗口间步长</translation>
    </message>
</context>
<context>
    <name>layer.cross_entropy</name>
    <message>
        <source>softmax + negative log-likelihood</source>
        <translation>softmax + 负对数似然</translation>
    </message>
</context>
<context>
    <name>layer.cross_entropy.label_smoothing</name>
    <message>
        <source>mix of the uniform distribution into targets</source>
        <translation>混入目标的均匀分布比例</translation>
    </message>
</context>
<context>
    <name>layer.dropout</name>
    <message>
        <source>zeroes elements with probability p while training</source>
        <translation>训练时以概率 p 将元素置零</translation>
    </message>
</context>
<context>
    <name>layer.dropout.p</name>
    <message>
        <source>drop probability</source>
        <translation>丢弃概率</translation>
    </message>
</context>
<context>
    <name>layer.flatten</name>
    <message>
        <source>(N, C, H, W) -&gt; (N, C*H*W)</source>
        <translation>(N, C, H, W) -&gt; (N, C*H*W)</translation>
    </message>
</context>
<context>
    <name>layer.gelu</name>
    <message>
        <source>x * Phi(x) (exact erf form)</source>
        <translation>x * Phi(x)（精确 erf 形式）</translation>
    </message>
</context>
<context>
    <name>layer.leaky_relu</name>
    <message>
        <source>x if x &gt; 0 else slope * x</source>
        <translation>x &gt; 0 时为 x，否则为 slope * x</translation>
    </message>
</context>
<context>
    <name>layer.leaky_relu.negative_slope</name>
    <message>
        <source>slope for x &lt; 0</source>
        <translation>x &lt; 0 时的斜率</translation>
    </message>
</context>
<context>
    <name>layer.linear</name>
    <message>
        <source>fully connected layer y = x W^T + b</source>
        <translation>全连接层 y = x W^T + b</translation>
    </message>
</context>
<context>
    <name>layer.linear.bias</name>
    <message>
        <source>learn an additive bias</source>
        <translation>学习一个加性偏置</translation>
    </message>
</context>
<context>
    <name>layer.linear.in_features</name>
    <message>
        <source>input features</source>
        <translation>输入特征数</translation>
    </message>
</context>
<context>
    <name>layer.linear.out_features</name>
    <message>
        <source>output features</source>
        <translation>输出特征数</translation>
    </message>
</context>
<context>
    <name>layer.maxpool2d</name>
    <message>
        <source>maximum over square windows</source>
        <translation>方形窗口内取最大值</translation>
    </message>
</context>
<context>
    <name>layer.maxpool2d.kernel_size</name>
    <message>
        <source>window size</source>
        <translation>窗口大小</translation>
    </message>
</context>
<context>
    <name>layer.maxpool2d.padding</name>
    <message>
        <source>implicit -inf padding on each side</source>
        <translation>每侧隐式填充 -inf</translation>
    </message>
</context>
<context>
    <name>layer.maxpool2d.stride</name>
    <message>
        <source>step between windows (0: kernel_size)</source>
        <translation>窗口间步长（0：等于 kernel_size）</translation>
    </message>
</context>
<context>
    <name>layer.mse</name>
    <message>
        <source>mean squared error against one-hot targets</source>
        <translation>与 one-hot 目标之间的均方误差</translation>
    </message>
</context>
<context>
    <name>layer.relu</name>
    <message>
        <source>max(x, 0)</source>
        <translation>max(x, 0)</translation>
    </message>
</context>
<context>
    <name>layer.residual</name>
    <message>
        <source>output = body(x) + shortcut(x); shortcut is the identity when empty</source>
        <translation>输出 = body(x) + shortcut(x)；shortcut 为空时即恒等映射</translation>
    </message>
</context>
<context>
    <name>layer.sigmoid</name>
    <message>
        <source>1 / (1 + exp(-x))</source>
        <translation>1 / (1 + exp(-x))</translation>
    </message>
</context>
<context>
    <name>layer.tanh</name>
    <message>
        <source>hyperbolic tangent</source>
        <translation>双曲正切</translation>
    </message>
</context>
<context>
    <name>oom.cut_activations</name>
    <message>
        <source>The largest category is %1; to cut it: --checkpoint all, --precision bf16, or a smaller --micro-batch with accumulation.</source>
        <translation>占用最大的类别是 %1；要减少它：--checkpoint all、--precision bf16，或更小的 --micro-batch 加梯度累积。</translation>
    </message>
</context>
<context>
    <name>oom.cut_batch</name>
    <message>
        <source>The largest category is %1; to cut it: a smaller --batch.</source>
        <translation>占用最大的类别是 %1；要减少它：更小的 --batch。</translation>
    </message>
</context>
<context>
    <name>oom.cut_master_weights</name>
    <message>
        <source>The largest category is %1; to cut it: --offload-optimizer.</source>
        <translation>占用最大的类别是 %1；要减少它：--offload-optimizer。</translation>
    </message>
</context>
<context>
    <name>oom.cut_optimizer_state</name>
    <message>
        <source>The largest category is %1; to cut it: --offload-optimizer, or --optimizer sgd (no state without momentum).</source>
        <translation>占用最大的类别是 %1；要减少它：--offload-optimizer，或 --optimizer sgd（不带动量时没有状态）。</translation>
    </message>
</context>
<context>
    <name>oom.cut_weights</name>
    <message>
        <source>The largest category is %1; to cut it: --precision bf16.</source>
        <translation>占用最大的类别是 %1；要减少它：--precision bf16。</translation>
    </message>
</context>
<context>
    <name>oom.cut_workspace</name>
    <message>
        <source>The largest category is %1; to cut it: a smaller --micro-batch.</source>
        <translation>占用最大的类别是 %1；要减少它：更小的 --micro-batch。</translation>
    </message>
</context>
<context>
    <name>oom.in_use</name>
    <message>
        <source>In use: %1.</source>
        <translation>已占用：%1。</translation>
    </message>
</context>
<context>
    <name>oom.largest_layers</name>
    <message>
        <source>Largest layers: %1.</source>
        <translation>占用最多的层：%1。</translation>
    </message>
</context>
<context>
    <name>oom.plan_hint</name>
    <message>
        <source>headroom plan --budget %1 lists the configurations that fit.</source>
        <translation>headroom plan --budget %1 会列出能放下的配置。</translation>
    </message>
</context>
<context>
    <name>oom.request</name>
    <message>
        <source>out of memory on %1 (limit %2): could not allocate %3 for %4 with %5 already in use.</source>
        <translation>%1 上内存不足（上限 %2）：已占用 %5 时无法再为 %4 分配 %3。</translation>
    </message>
</context>
<context>
    <name>oom.request_layer</name>
    <message>
        <source>out of memory on %1 (limit %2): could not allocate %3 for %4 of layer %5 with %6 already in use.</source>
        <translation>%1 上内存不足（上限 %2）：已占用 %6 时无法再为第 %5 层的 %4 分配 %3。</translation>
    </message>
</context>
<context>
    <name>run.stopped</name>
    <message>
        <source>training was stopped</source>
        <translation>训练已停止</translation>
    </message>
</context>
</TS>
