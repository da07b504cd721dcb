<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>Cli</name>
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
        <source>Configurations for %1 at batch %2 within %3 (fastest first; * marks the best):

</source>
        <translation>%1 在批大小 %2 下、%3 以内的配置（最快的在前；* 为最佳）：

</translation>
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
    <message>
        <source>train a model headless</source>
        <translation>无界面训练模型</translation>
    </message>
    <message>
        <source>Exit codes: 0 finished, 1 failed or stopped, 2 bad input (a flag, file, model spec,
dataset, a diverging loss, out of memory).</source>
        <translation>退出码：0 完成，1 失败或被停止，2 输入错误（选项、文件、模型规格、
数据集、损失发散、内存不足）。</translation>
    </message>
    <message>
        <source>predict a run&apos;s memory by category and layer; --budget finds
the strategies that fit</source>
        <translation>按类别和层预测一次运行的内存；--budget 找出
能放下的策略组合</translation>
    </message>
    <message>
        <source>list the built-in models</source>
        <translation>列出内置模型</translation>
    </message>
    <message>
        <source>Lists the built-in models with their parameter counts; with --json NAME, prints that
model&apos;s spec (docs/model-spec.md).</source>
        <translation>列出内置模型及其参数量；使用 --json NAME 时，打印该模型的
规格（docs/model-spec.md）。</translation>
    </message>
    <message>
        <source>list the devices Headroom can train on</source>
        <translation>列出 Headroom 可用于训练的设备</translation>
    </message>
    <message>
        <source>Lists the CPU and the CUDA devices, or why there are none.</source>
        <translation>列出 CPU 和 CUDA 设备，或说明为何没有。</translation>
    </message>
    <message>
        <source>list the run history</source>
        <translation>列出运行记录</translation>
    </message>
    <message>
        <source>Lists the runs in the history, newest first.</source>
        <translation>列出历史中的运行，最新的在前。</translation>
    </message>
    <message>
        <source>write a run&apos;s report (html, pdf, json, csv)</source>
        <translation>导出一次运行的报告（html、pdf、json、csv）</translation>
    </message>
    <message>
        <source>Writes the report of RUN: a run id, &apos;last&apos;, or a run&apos;s name (see headroom runs).</source>
        <translation>写出 RUN 的报告：RUN 为运行 id、&apos;last&apos; 或运行名称（见 headroom runs）。</translation>
    </message>
    <message>
        <source>Headroom %1: train neural networks within your GPU&apos;s memory, and see why memory is what it is.

Usage:
</source>
        <translation>Headroom %1：在 GPU 显存限制内训练神经网络，并了解显存占用的来龙去脉。

用法：
</translation>
    </message>
    <message>
        <source>open the workbench window</source>
        <translation>打开工作台窗口</translation>
    </message>
    <message>
        <source>(see headroom %1 --help)</source>
        <translation>（见 headroom %1 --help）</translation>
    </message>
    <message>
        <source>print the version</source>
        <translation>显示版本</translation>
    </message>
    <message>
        <source>this help</source>
        <translation>显示本帮助</translation>
    </message>
    <message>
        <source>Exit codes: 0 success, 1 failure, 2 bad input (a flag, file, model spec or dataset).
</source>
        <translation>退出码：0 成功，1 失败，2 输入错误（选项、文件、模型规格或数据集）。
</translation>
    </message>
    <message>
        <source>headroom: unknown command &apos;%1&apos;; use %2 (see headroom --help)
</source>
        <translation>headroom：未知命令“%1”；请使用 %2（见 headroom --help）
</translation>
    </message>
    <message>
        <source>headroom %1: %2
</source>
        <translation>headroom %1：%2
</translation>
    </message>
    <message>
        <source>a model spec (docs/model-spec.md)</source>
        <translation>模型规格文件（docs/model-spec.md）</translation>
    </message>
    <message>
        <source>use only the first N training samples (default 0: all)</source>
        <translation>只使用前 N 个训练样本（默认 0：全部）</translation>
    </message>
    <message>
        <source>use only the first N test samples (default 0: all)</source>
        <translation>只使用前 N 个测试样本（默认 0：全部）</translation>
    </message>
    <message>
        <source>passes over the training set (default 1)</source>
        <translation>遍历训练集的轮数（默认 1）</translation>
    </message>
    <message>
        <source>train exactly N steps instead (evaluates at the end)</source>
        <translation>改为恰好训练 N 步（结束时评估）</translation>
    </message>
    <message>
        <source>samples per optimizer step (default 64)</source>
        <translation>每个优化器步的样本数（默认 64）</translation>
    </message>
    <message>
        <source>fp32 (default), tf32, bf16, fp16 (mixed precision, f32 master weights;
fp16 with dynamic loss scaling)</source>
        <translation>fp32（默认）、tf32、bf16、fp16（混合精度，f32 主权重；
fp16 使用动态损失缩放）</translation>
    </message>
    <message>
        <source>precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>forward/backward N samples at a time, accumulating gradients</source>
        <translation>每次前向/反向 N 个样本，累积梯度</translation>
    </message>
    <message>
        <source>or: split each batch into N micro-batches</source>
        <translation>或：把每个批次拆成 N 个微批次</translation>
    </message>
    <message>
        <source>optimizer state and master weights in host memory</source>
        <translation>优化器状态和主权重放在主机内存中</translation>
    </message>
    <message>
        <source>cap the device memory (e.g. 4GiB, 512MiB), like a smaller card</source>
        <translation>限制设备内存（如 4GiB、512MiB），如同一张更小的卡</translation>
    </message>
    <message>
        <source>sgd (default), adam, adamw</source>
        <translation>sgd（默认）、adam、adamw</translation>
    </message>
    <message>
        <source>optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>SGD momentum in [0, 1) (default 0.9, as in the window)</source>
        <translation>SGD 动量，取值 [0, 1)（默认 0.9，与窗口相同）</translation>
    </message>
    <message>
        <source>learning rate (default 0.01 for sgd, 0.001 for adam/adamw)</source>
        <translation>学习率（sgd 默认 0.01，adam/adamw 默认 0.001）</translation>
    </message>
    <message>
        <source>SGD with Nesterov momentum</source>
        <translation>使用 Nesterov 动量的 SGD</translation>
    </message>
    <message>
        <source>L2 (sgd, adam) or decoupled (adamw) weight decay (default 0)</source>
        <translation>L2（sgd、adam）或解耦（adamw）权重衰减（默认 0）</translation>
    </message>
    <message>
        <source>learning rate schedule: constant (default), step, cosine</source>
        <translation>学习率调度：constant（默认）、step、cosine</translation>
    </message>
    <message>
        <source>schedule</source>
        <translation>调度</translation>
    </message>
    <message>
        <source>linear warm-up steps (default 0)</source>
        <translation>线性预热步数（默认 0）</translation>
    </message>
    <message>
        <source>step schedule: steps between decays (default 1000)</source>
        <translation>step 调度：两次衰减之间的步数（默认 1000）</translation>
    </message>
    <message>
        <source>step schedule: decay factor in (0, 1] (default 0.1)</source>
        <translation>step 调度：衰减系数，取值 (0, 1]（默认 0.1）</translation>
    </message>
    <message>
        <source>cosine schedule: final learning rate (default 0)</source>
        <translation>cosine 调度：最终学习率（默认 0）</translation>
    </message>
    <message>
        <source>cross-entropy label smoothing in [0, 1) (default: the model&apos;s)</source>
        <translation>交叉熵标签平滑，取值 [0, 1)（默认：模型自带的值）</translation>
    </message>
    <message>
        <source>auto (default: the GPU when one works, else the CPU), cpu, cuda:N</source>
        <translation>auto（默认：有可用 GPU 时用 GPU，否则用 CPU）、cpu、cuda:N</translation>
    </message>
    <message>
        <source>CPU threads, 0 to 1024 (default 0: all cores)</source>
        <translation>CPU 线程数，0 到 1024（默认 0：全部核心）</translation>
    </message>
    <message>
        <source>seed for initialisation, shuffling and dropout (default 1)</source>
        <translation>初始化、打乱和 dropout 的随机种子（默认 1）</translation>
    </message>
    <message>
        <source>output folder (default runs/run-YYYYMMDD-HHMMSS)</source>
        <translation>输出文件夹（默认 runs/run-YYYYMMDD-HHMMSS）</translation>
    </message>
    <message>
        <source>name of the run in the history (default: model on data)</source>
        <translation>运行在历史中的名称（默认：“模型 on 数据”）</translation>
    </message>
    <message>
        <source>do not record the run in the history</source>
        <translation>不在历史中记录本次运行</translation>
    </message>
    <message>
        <source>send a webhook message when the run ends: to URL (format from the host:
WeCom, DingTalk, Feishu/Lark, Slack, else generic JSON), FORMAT:URL with
FORMAT one of generic, wecom, dingtalk, feishu, slack, or &apos;settings&apos; for the
webhook saved in the window&apos;s Preferences</source>
        <translation>运行结束时发送 webhook 消息：发送到 URL（格式按主机判断：
企业微信、钉钉、飞书/Lark、Slack，否则为通用 JSON），或 FORMAT:URL，
FORMAT 为 generic、wecom、dingtalk、feishu、slack 之一，或用 &apos;settings&apos; 表示
窗口“首选项”中保存的 webhook</translation>
    </message>
    <message>
        <source>only the final line</source>
        <translation>只输出最后一行</translation>
    </message>
    <message>
        <source>run history database (default: the user&apos;s data folder)</source>
        <translation>运行历史数据库（默认：用户数据文件夹）</translation>
    </message>
    <message>
        <source>search for the best configuration within SIZE (4GiB, 512MiB, ...)
or the device&apos;s free memory</source>
        <translation>在 SIZE（4GiB、512MiB……）或设备空闲内存之内
搜索最佳配置</translation>
    </message>
    <message>
        <source>machine-readable output</source>
        <translation>机器可读的输出</translation>
    </message>
    <message>
        <source>html, pdf, json or csv (default: from --out&apos;s extension, else html)</source>
        <translation>html、pdf、json 或 csv（默认：按 --out 的扩展名，否则为 html）</translation>
    </message>
    <message>
        <source>format</source>
        <translation>格式</translation>
    </message>
    <message>
        <source>the report file (default ./headroom-run-ID.EXT)</source>
        <translation>报告文件（默认 ./headroom-run-ID.EXT）</translation>
    </message>
    <message>
        <source>only runs with these statuses: running, finished, failed, stopped</source>
        <translation>只列出这些状态的运行：running、finished、failed、stopped</translation>
    </message>
    <message>
        <source>status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>only runs whose name, model, data or device contains TEXT</source>
        <translation>只列出名称、模型、数据或设备中包含 TEXT 的运行</translation>
    </message>
    <message>
        <source>at most N runs, newest first (default 0: all)</source>
        <translation>最多 N 个运行，最新的在前（默认 0：全部）</translation>
    </message>
    <message>
        <source>print the preset NAME&apos;s model spec as JSON</source>
        <translation>以 JSON 打印预设 NAME 的模型规格</translation>
    </message>
    <message>
        <source>Model (one of)</source>
        <translation>模型（任选其一）</translation>
    </message>
    <message>
        <source>Data</source>
        <translation>数据</translation>
    </message>
    <message>
        <source>Length</source>
        <translation>训练长度</translation>
    </message>
    <message>
        <source>Batch and memory strategies (see headroom plan)</source>
        <translation>批次与内存策略（见 headroom plan）</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>Learning rate and regularisation</source>
        <translation>学习率与正则化</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>History</source>
        <translation>历史</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>搜索</translation>
    </message>
    <message>
        <source>Report</source>
        <translation>报告</translation>
    </message>
    <message>
        <source>Filter</source>
        <translation>筛选</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>see headroom %1 --help</source>
        <translation>见 headroom %1 --help</translation>
    </message>
    <message>
        <source>an integer of at least %1</source>
        <translation>不小于 %1 的整数</translation>
    </message>
    <message>
        <source>an integer from %1 to %2</source>
        <translation>%1 到 %2 之间的整数</translation>
    </message>
    <message>
        <source>%1 expects %2, got &apos;%3&apos;</source>
        <translation>%1 需要%2，得到的是“%3”</translation>
    </message>
    <message>
        <source>a number greater than %1</source>
        <translation>大于 %1 的数</translation>
    </message>
    <message>
        <source>a number of at least %1</source>
        <translation>不小于 %1 的数</translation>
    </message>
    <message>
        <source>a number in %1%2, %3%4</source>
        <translation>取值在 %1%2, %3%4 内的数</translation>
    </message>
    <message>
        <source>unknown %1 &apos;%2&apos; for %3; use %4</source>
        <translation>%3 的%1“%2”未知；请使用 %4</translation>
    </message>
    <message>
        <source>%1 or %2</source>
        <translation>%1 或 %2</translation>
    </message>
    <message>
        <source>unknown option &apos;%1&apos; for &apos;headroom %2&apos;; %3</source>
        <translation>“headroom %2”没有选项“%1”；%3</translation>
    </message>
    <message>
        <source>%1 needs a value (%2)</source>
        <translation>%1 需要一个值（%2）</translation>
    </message>
    <message>
        <source>%1 takes no value (%2)</source>
        <translation>%1 不接受值（%2）</translation>
    </message>
    <message>
        <source>%1 is given more than once; give it once</source>
        <translation>%1 给出了不止一次；请只给一次</translation>
    </message>
    <message>
        <source>give either --%1 or --%2, not both</source>
        <translation>请只给出 --%1 或 --%2 之一，不要同时给出</translation>
    </message>
    <message>
        <source>unexpected argument &apos;%1&apos; for &apos;headroom %2&apos;; %3</source>
        <translation>“headroom %2”不接受多余的参数“%1”；%3</translation>
    </message>
    <message>
        <source>&apos;headroom %1&apos; needs %2; %3</source>
        <translation>“headroom %1”需要 %2；%3</translation>
    </message>
    <message>
        <source>Usage: headroom %1 %2
</source>
        <translation>用法：headroom %1 %2
</translation>
    </message>
    <message>
        <source>headroom presets: give --json and a preset name, e.g. headroom presets --json seed-cnn
</source>
        <translation>headroom presets：请给出 --json 和预设名称，例如 headroom presets --json seed-cnn
</translation>
    </message>
    <message>
        <source>headroom presets: %1
</source>
        <translation>headroom presets：%1
</translation>
    </message>
    <message>
        <source>headroom runs: there is no run history at %1; give the --db of an existing history
</source>
        <translation>headroom runs：%1 处没有运行历史；请用 --db 指定一个已有的历史数据库
</translation>
    </message>
    <message>
        <source>headroom runs: %1
</source>
        <translation>headroom runs：%1
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
    <message>
        <source>device: %1 (--device %2)
</source>
        <translation>设备：%1（--device %2）
</translation>
    </message>
    <message>
        <source>device: %1; %2
</source>
        <translation>设备：%1；%2
</translation>
    </message>
    <message>
        <source>memory: no prediction (%1); measured peak %2
</source>
        <translation>内存：无预测（%1）；实测峰值 %2
</translation>
    </message>
    <message>
        <source>test accuracy of a weights file (Headroom&apos;s or PyTorch&apos;s)</source>
        <translation>权重文件（Headroom 或 PyTorch 的）的测试准确率</translation>
    </message>
    <message>
        <source>Exit codes: 0 evaluated, 2 bad input (a file, model or dataset that does not fit).</source>
        <translation>退出码：0 已评估，2 输入错误（不匹配的文件、模型或数据集）。</translation>
    </message>
    <message>
        <source>continue a prompt with a trained language model</source>
        <translation>用训练好的语言模型续写提示词</translation>
    </message>
    <message>
        <source>Loads a language model&apos;s weights and the tokenizer stored next to them (a run from the history,
a run folder, or a model.safetensors file) and prints the prompt followed by the generated text.
Temperature 0 picks the most likely token every time (greedy: the same text on every call);
otherwise the same --seed, weights and prompt give the same text.</source>
        <translation>加载语言模型的权重及与其存放在一起的分词器（运行记录中的一次运行、
一个运行文件夹或一个 model.safetensors 文件），并打印提示词及其后生成的文本。
温度为 0 时每次都选概率最高的 token（贪心：每次调用得到相同的文本）；
否则相同的 --seed、权重和提示词会得到相同的文本。</translation>
    </message>
    <message>
        <source>headroom eval: %1
</source>
        <translation>headroom eval：%1
</translation>
    </message>
    <message>
        <source>--weights FILE.safetensors is required: the weights to evaluate</source>
        <translation>必须给出 --weights FILE.safetensors：要评估的权重</translation>
    </message>
    <message>
        <source>evaluated %1 on %2 test samples of %3 (%4)
</source>
        <translation>已在 %3 的 %2 个测试样本上评估 %1（%4）
</translation>
    </message>
    <message>
        <source>activation checkpointing: none (default), all, every:K, list:I,J, auto,
attention (transformers: recompute only the attention core)</source>
        <translation>梯度检查点：none（默认）、all、every:K、list:I,J、auto、
attention（transformer：只重计算注意力核心）</translation>
    </message>
    <message>
        <source>clip the gradients&apos; global L2 norm to F (default 0: off)</source>
        <translation>把梯度的全局 L2 范数裁剪到 F（默认 0：关闭）</translation>
    </message>
    <message>
        <source>adam/adamw beta1 in [0, 1) (default 0.9)</source>
        <translation>adam/adamw 的 beta1，取值在 [0, 1) 内（默认 0.9）</translation>
    </message>
    <message>
        <source>adam/adamw beta2 in [0, 1) (default 0.999)</source>
        <translation>adam/adamw 的 beta2，取值在 [0, 1) 内（默认 0.999）</translation>
    </message>
    <message>
        <source>adam/adamw epsilon, greater than 0 (default 1e-8)</source>
        <translation>adam/adamw 的 epsilon，大于 0（默认 1e-8）</translation>
    </message>
    <message>
        <source>what weight decay applies to: auto (default: matrices for transformers,
else all), all, matrices (weights and embeddings, not biases or norms)</source>
        <translation>权重衰减作用于哪些参数：auto（默认：transformer 为矩阵，
其他模型为全部）、all、matrices（权重和嵌入，不含偏置和归一化层）</translation>
    </message>
    <message>
        <source>decay scope</source>
        <translation>衰减范围</translation>
    </message>
    <message>
        <source>tokens per sequence, 1 to the model&apos;s positions (default 0: the model&apos;s)</source>
        <translation>每个序列的 token 数，1 到模型的位置数（默认 0：模型的位置数）</translation>
    </message>
    <message>
        <source>evaluate every N steps: test loss and accuracy, a language model&apos;s validation loss (default 0: at the end of each epoch)</source>
        <translation>每 N 步评估一次：测试损失和准确率，语言模型则为验证损失（默认 0：每个 epoch 结束时）</translation>
    </message>
    <message>
        <source>validation tokens per evaluation (default 65536; 0: the whole split)</source>
        <translation>每次评估使用的验证 token 数（默认 65536；0：整个验证集）</translation>
    </message>
    <message>
        <source>train on N processes of this machine, launched through mpirun (default 1);
plan: predict each of N ranks without the devices</source>
        <translation>在本机的 N 个进程上训练，通过 mpirun 启动（默认 1）；
plan：不使用设备，预测 N 个 rank 中的每一个</translation>
    </message>
    <message>
        <source>sharding over the ranks: none (default), dp, zero1, zero2, zero3</source>
        <translation>在各 rank 间的分片方式：none（默认）、dp、zero1、zero2、zero3</translation>
    </message>
    <message>
        <source>sharding stage</source>
        <translation>分片阶段</translation>
    </message>
    <message>
        <source>samples of each rank per step, adding up to --batch (default: an even split)</source>
        <translation>每个 rank 每步的样本数，总和为 --batch（默认：平均分配）</translation>
    </message>
    <message>
        <source>several ranks: end the run when a rank makes no progress this long (default 300)</source>
        <translation>多个 rank 时：某个 rank 这么长时间没有进展就结束运行（默认 300）</translation>
    </message>
    <message>
        <source>write a checkpoint into the run folder every N steps, or every N minutes
(Nm; Ns seconds), and at the end; the last two are kept (default 10m)</source>
        <translation>每 N 步或每 N 分钟（Nm；Ns 为秒）以及结束时在运行文件夹中写一个检查点；
保留最近两个（默认 10m）</translation>
    </message>
    <message>
        <source>start from these weights (Headroom&apos;s or PyTorch&apos;s names, DDP&apos;s module. prefix,
or matched by order and shape, printed as a table); or a Hugging Face model
folder, a peft adapter folder, or a Headroom run folder (its model.safetensors;
a LoRA run&apos;s: its adapters on their base model)</source>
        <translation>从这些权重开始（Headroom 或 PyTorch 的名称、DDP 的 module. 前缀，
或按顺序和形状匹配，并以表格打印）；也可以是 Hugging Face 模型文件夹、
peft 适配器文件夹或 Headroom 运行文件夹（用其 model.safetensors；
LoRA 运行的文件夹：其适配器加在其基础模型上）</translation>
    </message>
    <message>
        <source>the weights to evaluate (Headroom&apos;s or PyTorch&apos;s names, DDP&apos;s module. prefix,
or matched by order and shape)</source>
        <translation>要评估的权重（Headroom 或 PyTorch 的名称、DDP 的 module. 前缀，
或按顺序和形状匹配）</translation>
    </message>
    <message>
        <source>a run: its id, &apos;last&apos;, its name (see headroom runs) or its folder</source>
        <translation>一次运行：它的编号、&apos;last&apos;、它的名称（见 headroom runs）或它的文件夹</translation>
    </message>
    <message>
        <source>or: a model.safetensors file (its tokenizer from the same folder)</source>
        <translation>或：一个 model.safetensors 文件（分词器取自同一文件夹）</translation>
    </message>
    <message>
        <source>the text to continue (default: start after a newline)</source>
        <translation>要续写的文本（默认：从一个换行符之后开始）</translation>
    </message>
    <message>
        <source>new tokens to generate, 1 to 100000 (default 200)</source>
        <translation>要生成的新 token 数，1 到 100000（默认 200）</translation>
    </message>
    <message>
        <source>sampling temperature, 0 to 100 (default 0.8; 0: greedy, deterministic)</source>
        <translation>采样温度，0 到 100（默认 0.8；0：贪心，结果确定）</translation>
    </message>
    <message>
        <source>sample among the K most likely tokens only (default 0: all)</source>
        <translation>只在概率最高的 K 个 token 中采样（默认 0：全部）</translation>
    </message>
    <message>
        <source>seed of the sampling (default 1)</source>
        <translation>采样的随机种子（默认 1）</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>Language models</source>
        <translation>语言模型</translation>
    </message>
    <message>
        <source>Generation</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>there is no run history at %1; give the --db of an existing history</source>
        <translation>%1 处没有运行记录；请用 --db 给出一个已有的运行记录</translation>
    </message>
    <message>
        <source>there is no run &apos;%1&apos; in %2 and no such folder; see headroom runs</source>
        <translation>%2 中没有运行“%1”，也没有这个文件夹；见 headroom runs</translation>
    </message>
    <message>
        <source>run %1 (%2) has no output folder on record; pass its folder with --run DIR or its weights with --weights FILE</source>
        <translation>运行 %1（%2）没有记录输出文件夹；请用 --run DIR 给出它的文件夹，或用 --weights FILE 给出它的权重</translation>
    </message>
    <message>
        <source>headroom generate: %1
</source>
        <translation>headroom generate：%1
</translation>
    </message>
    <message>
        <source>say which model to sample: --run RUN (an id, &apos;last&apos;, a name or a run folder) or --weights FILE; see headroom generate --help</source>
        <translation>请指定要采样的模型：--run RUN（编号、&apos;last&apos;、名称或运行文件夹）或 --weights FILE；见 headroom generate --help</translation>
    </message>
    <message>
        <source>--weights %1: no such file; pass a model.safetensors written by headroom train</source>
        <translation>--weights %1：文件不存在；请给出 headroom train 写出的 model.safetensors</translation>
    </message>
    <message>
        <source>--run %1: the run&apos;s folder %2 is gone; pass --weights FILE</source>
        <translation>--run %1：该运行的文件夹 %2 已不存在；请给出 --weights FILE</translation>
    </message>
    <message>
        <source>%1 ranks, %2; the table is rank %3 (the one that needs the most); communication %4 per step
</source>
        <translation>%1 个 rank，%2；表中是 rank %3（需要内存最多的那个）；每步通信 %4
</translation>
    </message>
    <message>
        <source>  rank %1: batch %2, device %3, host %4
</source>
        <translation>  rank %1：批次 %2，设备 %3，主机 %4
</translation>
    </message>
    <message>
        <source>Language model: sequence %1 tokens, %2 x %1 = %3 tokens per step, %4 parameters

</source>
        <translation>语言模型：序列 %1 个 token，每步 %2 x %1 = %3 个 token，%4 个参数

</translation>
    </message>
    <message>
        <source>Device figures: %1

</source>
        <translation>设备数据：%1

</translation>
    </message>
    <message>
        <source><byte value="xd"/>[%1] step %2/%3  epoch %4  loss %5  %6 tokens/s  ETA %7 </source>
        <translation><byte value="xd"/>[%1] 第 %2/%3 步  第 %4 轮  损失 %5  %6 token/秒  剩余 %7 </translation>
    </message>
    <message>
        <source>epoch %1: train_loss=%2 test_loss=%3 test_accuracy=%4 tokens/s=%5 time=%6s
</source>
        <translation>第 %1 轮：train_loss=%2 test_loss=%3 test_accuracy=%4 tokens/s=%5 耗时=%6 秒
</translation>
    </message>
    <message>
        <source>tokens/s=%1 (%2 %3 tokens, sequence %4)
</source>
        <translation>tokens/s=%1（%2 个 %3 token，序列 %4）
</translation>
    </message>
    <message>
        <source>headroom train: --ranks needs Open MPI&apos;s mpirun, which is not on PATH; install openmpi-bin (or run one process without --ranks)
</source>
        <translation>headroom train：--ranks 需要 Open MPI 的 mpirun，但它不在 PATH 中；请安装 openmpi-bin（或不带 --ranks 以单个进程运行）
</translation>
    </message>
    <message>
        <source>headroom train: could not start %1: %2
</source>
        <translation>headroom train：无法启动 %1：%2
</translation>
    </message>
    <message>
        <source>headroom train: rank %1: %2
</source>
        <translation>headroom train：rank %1：%2
</translation>
    </message>
    <message>
        <source>cannot read %1: %2</source>
        <translation>无法读取 %1：%2</translation>
    </message>
    <message>
        <source>%1 is not valid JSON (%2)</source>
        <translation>%1 不是有效的 JSON（%2）</translation>
    </message>
    <message>
        <source>the ranks were ended (interrupted) before rank 0 recorded the run&apos;s end</source>
        <translation>在 rank 0 记录运行结束之前，各 rank 已被结束（中断）</translation>
    </message>
    <message>
        <source>rank 0 was ended before it recorded the run&apos;s end (mpirun exit status %1); another rank probably failed first: mpirun&apos;s message names it</source>
        <translation>rank 0 在记录运行结束之前被结束（mpirun 退出状态 %1）；可能是另一个 rank 先失败了：mpirun 的消息会指出是哪一个</translation>
    </message>
    <message>
        <source>continues #%1</source>
        <translation>接续 #%1</translation>
    </message>
    <message>
        <source>continued in #%1</source>
        <translation>已在 #%1 中继续</translation>
    </message>
    <message>
        <source>pause between steps while FILE exists (create it to pause, remove it to go on);
several ranks: rank 0 watches it and every rank pauses after the same step</source>
        <translation>FILE 存在期间在两步之间暂停（创建它即暂停，删除它即继续）；
多个 rank 时由 rank 0 监视它，所有 rank 在同一步之后暂停</translation>
    </message>
    <message>
        <source>train with the whole configuration in FILE (a run folder&apos;s config.json);
only --ranks, --out, --name, --db, --no-history, --quiet, --notify and --pause-file may be added</source>
        <translation>使用 FILE 中的完整配置训练（运行文件夹中的 config.json）；
只能另加 --ranks、--out、--name、--db、--no-history、--quiet、--notify 和 --pause-file</translation>
    </message>
    <message>
        <source>--config %1 holds the whole configuration; only --ranks, --out, --name, --db, --no-history, --quiet, --notify and --pause-file may be added, not %2</source>
        <translation>--config %1 已包含完整配置；只能另加 --ranks、--out、--name、--db、--no-history、--quiet、--notify 和 --pause-file，不能加 %2</translation>
    </message>
    <message>
        <source>headroom train: paused between steps (%1 exists; remove it to go on)
</source>
        <translation>headroom train：已在两步之间暂停（%1 存在；删除它即可继续）
</translation>
    </message>
    <message>
        <source>headroom train: going on (%1 was removed)
</source>
        <translation>headroom train：继续训练（%1 已删除）
</translation>
    </message>
    <message>
        <source>with --budget: every candidate, not only the front of memory against speed</source>
        <translation>与 --budget 一起使用：列出全部候选，而不仅是内存与速度的前沿</translation>
    </message>
    <message>
        <source>
Nothing fits in %1 as set up; sharded, it %2.
</source>
        <translation>
按当前设置，%1 内没有可行配置；分片后%2。
</translation>
    </message>
    <message>
        <source>         GPU code: built for %1, which covers compute capability %2.%3
</source>
        <translation>         GPU 代码：为 %1 构建，覆盖计算能力 %2.%3
</translation>
    </message>
    <message>
        <source>         GPU code: none for this GPU: %1
</source>
        <translation>         GPU 代码：此 GPU 没有可运行的代码：%1
</translation>
    </message>
    <message>
        <source>headroom: this program has no window; use a subcommand (see --help).
</source>
        <translation>headroom：此程序没有窗口；请使用子命令（见 --help）。
</translation>
    </message>
    <message>
        <source>--resume %1 --config %2: the file is the continued configuration as a whole; only --ranks, --name, --db, --no-history, --quiet, --notify and --pause-file may be added, not %3</source>
        <translation>--resume %1 --config %2：该文件是完整的续训配置；只能再加 --ranks、--name、--db、--no-history、--quiet、--notify 和 --pause-file，不能加 %3</translation>
    </message>
    <message>
        <source>%1 changes %2 of the run in %3; a continued run keeps its own configuration except its length, threads, device, checkpoint interval and sharding stage. Start a new run (--init-from %3/model.safetensors takes its weights) to change the rest</source>
        <translation>%1 更改了 %3 中运行的 %2；续训的运行保留其自身配置，只有长度、线程数、设备、检查点间隔和分片阶段可以更改。要更改其余设置，请开始新的运行（--init-from %3/model.safetensors 可沿用其权重）</translation>
    </message>
    <message>
        <source>a table&apos;s class column, by name or number from 1 (csv:/tsv: data)</source>
        <translation>表格的类别列，按列名或从 1 开始的列号（csv:/tsv: 数据）</translation>
    </message>
    <message>
        <source>  the data set %1 takes %2 of host RAM (%3 training and %4 test samples), besides the loader&apos;s buffers (data above)
</source>
        <translation>  数据集 %1 占用主机内存 %2（%3 个训练样本和 %4 个测试样本），另有加载器的缓冲区（上面的 data）
</translation>
    </message>
    <message>
        <source><byte value="xd"/>[%1] step %2/%3  epoch %4  loss %5  %6 rows/s  ETA %7 </source>
        <translation><byte value="xd"/>[%1] 第 %2/%3 步  第 %4 轮  损失 %5  %6 行/秒  剩余 %7 </translation>
    </message>
    <message>
        <source>epoch %1: train_loss=%2 train_accuracy=%3 test_loss=%4 test_accuracy=%5 rows/s=%6 time=%7s
</source>
        <translation>第 %1 轮：train_loss=%2 train_accuracy=%3 test_loss=%4 test_accuracy=%5 rows/s=%6 耗时=%7 秒
</translation>
    </message>
    <message>
        <source>
  the driver will see %1 per process: %2 reserved by the caching allocator for the ledger&apos;s %3, and %4 outside the ledger (the CUDA context and the cuBLAS/cuDNN handles %5</source>
        <translation>
  驱动将看到每个进程 %1：缓存分配器为账本的 %3 保留 %2，账本之外 %4（CUDA 上下文与 cuBLAS/cuDNN 句柄 %5</translation>
    </message>
    <message>
        <source>, NCCL %1 %2</source>
        <translation>，NCCL %1 %2</translation>
    </message>
    <message>
        <source>as an earlier run on this GPU measured it</source>
        <translation>（由此前在该 GPU 上的一次运行测得）</translation>
    </message>
    <message>
        <source>estimated from NCCL&apos;s default buffers until a run measures it</source>
        <translation>（按 NCCL 默认缓冲区估算，待一次运行实测）</translation>
    </message>
    <message>
        <source>  %1 with a 5 % margin, of %2 free on %3: %4
</source>
        <translation>  含 5 % 余量共 %1，%3 上可用 %2：%4
</translation>
    </message>
    <message>
        <source>%1 % of each weight tensor&apos;s smallest values set to zero</source>
        <translation>每个权重张量中最小的 %1 % 的值置零</translation>
    </message>
    <message>
        <source>int8 with a scale per output row</source>
        <translation>int8，每个输出行一个缩放因子</translation>
    </message>
    <message>
        <source>int4 with a scale per %1 values</source>
        <translation>int4，每 %1 个值一个缩放因子</translation>
    </message>
    <message>
        <source>what-if: %1, on %2 weight tensors (%3 values, %4 zero after); stored so they take %5 instead of %6 as f32 (%7x), besides %8 of biases, normalisation and statistics kept as they are; the largest change to a weight %9
</source>
        <translation>假设分析：%1，作用于 %2 个权重张量（%3 个值，之后 %4 个为零）；如此存储占 %5，而 f32 为 %6（%7 倍），另有 %8 的偏置、归一化参数和统计量保持不变；单个权重的最大变化 %9
</translation>
    </message>
    <message>
        <source>quantisation</source>
        <translation>量化方式</translation>
    </message>
    <message>
        <source>Trains a model headless and writes DIR/model.safetensors (PyTorch state_dict names), then
DIR/run.json (config, per-epoch metrics, final metrics, predicted and measured memory; see
docs/run-json.md), so a folder with run.json is complete. The first line says which device
trains and why; the last line printed is test_accuracy=0.xxxx (a language model: test_loss=X,
the validation loss per token, after a tokens/s line). Ctrl-C stops after the current step
and writes the results so far. With --prune/--quantize the written weights are evaluated
again pruned/quantised (run.json final.compression; the report&apos;s what-if section).</source>
        <translation>无界面训练模型，写出 DIR/model.safetensors（PyTorch state_dict 名称），然后写出
DIR/run.json（配置、每轮指标、最终指标、预测与实测内存；见 docs/run-json.md），
因此有 run.json 的文件夹就是完整的。第一行说明用哪个设备训练及原因；最后打印的一行是
test_accuracy=0.xxxx（语言模型：test_loss=X，即每个 token 的验证损失，在 tokens/s 一行之后）。
Ctrl-C 在当前步之后停止，并写出目前的结果。使用 --prune/--quantize 时，写出的权重会在
剪枝/量化后再评估一次（run.json 的 final.compression；报告中的假设分析一节）。</translation>
    </message>
    <message>
        <source>what-if: the test accuracy again with the fraction S of each weight tensor&apos;s smallest
values set to zero (magnitude pruning, 0 to 0.99; the weights file is not changed)</source>
        <translation>假设分析：把每个权重张量中绝对值最小的比例 S 置零后再测一次测试准确率
（幅值剪枝，0 到 0.99；权重文件不变）</translation>
    </message>
    <message>
        <source>Pruned and quantised what-ifs</source>
        <translation>剪枝与量化假设分析</translation>
    </message>
    <message>
        <source>Predicts the memory of a training run before it starts: bytes per category (parameters, gradients,
optimizer state, master weights, activations, workspace, data) on the device and on the host, per
layer, and the step cost of the chosen strategies. With --budget it searches precision,
checkpointing, micro-batch/accumulation and optimizer offload for the configuration that fits
and is predicted fastest, and says why each other one ranks lower or does not fit. With --prune
or --quantize it adds what the trained weights would take stored pruned or quantised.</source>
        <translation>在训练开始之前预测其内存：设备和主机上每个类别（参数、梯度、优化器状态、
主权重、激活、工作区、数据）的字节数、每层的字节数，以及所选策略的单步开销。
使用 --budget 时，它在精度、梯度检查点、微批次/梯度累积和优化器卸载中搜索
能放下且预测最快的配置，并说明其他每种配置为何排名更低或放不下。使用 --prune
或 --quantize 时，它还给出训练后的权重剪枝或量化存储时所占的大小。</translation>
    </message>
    <message>
        <source>%1 % pruned</source>
        <translation>剪枝 %1 %</translation>
    </message>
    <message>
        <source>int8 with a scale per row</source>
        <translation>int8，每行一个缩放因子</translation>
    </message>
    <message>
        <source>, </source>
        <comment>between the parts of a list</comment>
        <translation>，</translation>
    </message>
    <message>
        <source>top-level layers of each pipeline stage, e.g. 5,3 for a bigger first card
(default: balanced by estimated time; headroom plan shows both balances)</source>
        <translation>每个流水线阶段的顶层层数，例如 5,3 让第一张卡（更大的卡）多分层
（默认：按估计耗时均衡；headroom plan 会给出两种均衡方案）</translation>
    </message>
    <message>
        <source>pipeline stages</source>
        <translation>流水线阶段</translation>
    </message>
    <message>
        <source>tensor-parallel head</source>
        <translation>张量并行输出头</translation>
    </message>
    <message>
        <source>  rank %1: stage %1, layers %2-%3, device %4, host %5
</source>
        <translation>  rank %1：阶段 %1，层 %2-%3，设备 %4，主机 %5
</translation>
    </message>
    <message>
        <source>  pipeline bubble %1 % with %2 micro-batches (1F1B: (K - 1) / (m + K - 1)); splits that balance the estimated time: --pipeline-split %3, the memory: --pipeline-split %4
</source>
        <translation>  流水线气泡 %1 %（%2 个微批次；1F1B：(K - 1) / (m + K - 1)）；均衡估计耗时的划分：--pipeline-split %3，均衡内存的划分：--pipeline-split %4
</translation>
    </message>
    <message>
        <source>parameters and gradients in host memory too, each unit brought
to the device one unit ahead (ZeRO-Infinity; needs --shard zero3)</source>
        <translation>参数和梯度也放在主机内存中，每个单元提前一个单元
送到设备上（ZeRO-Infinity；需要 --shard zero3）</translation>
    </message>
    <message>
        <source>continue the run in DIR from its newest checkpoint, with its own configuration;
only --steps/--epochs (the new total), --threads, --device, --save-every, --ranks, --shard,
--tp-head, --pipeline, --pipeline-split and --offload-params may change
(or give them in --config FILE, the continued configuration as a whole)</source>
        <translation>从 DIR 中最新的检查点继续该运行，使用其自身的配置；
只能更改 --steps/--epochs（新的总长度）、--threads、--device、--save-every、--ranks、--shard、
--tp-head、--pipeline、--pipeline-split 和 --offload-params
（或在 --config FILE 中给出它们：完整的续训配置）</translation>
    </message>
    <message>
        <source>
Peak: %1
Predicted step: %2 ms (%3x the fp32 step without strategies; %4 recomputed forward FLOPs, %5 host traffic: %6 ms at %7/s)
</source>
        <translation>
峰值：%1
预测每步耗时：%2 毫秒（为不用策略的 fp32 单步的 %3 倍；重计算前向 %4 FLOPs，主机传输 %5：按 %7/s 约 %6 毫秒）
</translation>
    </message>
    <message>
        <source>--resume continues a run with its own configuration; only --steps, --epochs, --threads, --device, --save-every, --ranks, --shard, --tp-head, --pipeline, --pipeline-split and --offload-params may change, not %1. Start a new run (--init-from %2/model.safetensors takes its weights) to change the rest</source>
        <translation>--resume 以运行自己的配置继续；只有 --steps、--epochs、--threads、--device、--save-every、--ranks、--shard、--tp-head、--pipeline、--pipeline-split 和 --offload-params 可以更改，%1 不行。要更改其他设置，请开始新的运行（--init-from %2/model.safetensors 会沿用其权重）</translation>
    </message>
    <message>
        <source>  rank %1: stage %2 of replica %3, layers %4-%5, device %6, host %7
</source>
        <translation>  rank %1：副本 %3 的阶段 %2，层 %4-%5，设备 %6，主机 %7
</translation>
    </message>
    <message>
        <source>LoRA scale alpha / R (default: alpha = R)</source>
        <translation>LoRA 缩放系数 alpha / R（默认 alpha = R）</translation>
    </message>
    <message>
        <source>with --lora: drop each adapter&apos;s input with probability P while
training, peft&apos;s lora_dropout (default: 0, none)</source>
        <translation>与 --lora 一起使用：训练时以概率 P 丢弃每个适配器的输入，
即 peft 的 lora_dropout（默认 0，不丢弃）</translation>
    </message>
    <message>
        <source>LoRA: train rank-R adapters on every linear layer and transformer
projection, the rest of the model frozen (no gradients or optimizer state
for it); with --init-from, a trained model is fine-tuned; the test
accuracy before training is reported</source>
        <translation>LoRA：在每个线性层和每个 Transformer 投影上训练秩为 R 的适配器，
模型其余部分冻结（没有梯度，也没有优化器状态）；配合 --init-from
可微调已训练的模型；会报告训练前的测试准确率</translation>
    </message>
    <message>
        <source>base quantisation</source>
        <translation>基座量化</translation>
    </message>
    <message>
        <source>Evaluates a safetensors weights file on a dataset&apos;s test split and prints test_loss= and
test_accuracy=. The model comes from --preset/--model, else from the file&apos;s metadata, else
seed-cnn. Names may be Headroom&apos;s, PyTorch&apos;s (DDP&apos;s module. prefix is stripped), or differ:
then tensors are matched by order and shape and the match is printed as a table.
--prune S and --quantize int8|int4 evaluate again after pruning or quantising the weight
tensors and print test_loss_after=, test_accuracy_after= and the weights&apos; bytes stored so
(weights_bytes=, weights_bytes_after=); the file is not changed.
A language model (--data text:...) is scored on the validation windows a run evaluates:
the loss per token and the share of next tokens predicted, with the tokenizer written
next to the weights (else --tokenizer, built from the text as a run builds it).</source>
        <translation>在数据集的测试集上评估一个 safetensors 权重文件，并输出 test_loss= 和
test_accuracy=。模型来自 --preset/--model，否则来自文件的元数据，否则为
seed-cnn。名称可以是 Headroom 的、PyTorch 的（会去掉 DDP 的 module. 前缀），或不同：
此时按顺序和形状匹配张量，并以表格输出匹配结果。
--prune S 和 --quantize int8|int4 在剪枝或量化权重张量之后再评估一次，
输出 test_loss_after=、test_accuracy_after= 以及如此存储时权重的字节数
（weights_bytes=、weights_bytes_after=）；文件不会被修改。
语言模型（--data text:...）在运行所评估的验证窗口上计分：
每个词元的损失和预测对的下一个词元所占比例，使用写在权重旁边的分词器
（否则使用 --tokenizer，按运行的方式从文本构建）。</translation>
    </message>
    <message>
        <source>the weights name the %1 tokenizer, stored next to them: it was used, not --tokenizer %2
</source>
        <translation>权重指明了存放在其旁边的 %1 分词器：使用的是它，而不是 --tokenizer %2
</translation>
    </message>
    <message>
        <source>evaluated %1 on %2 validation tokens (%3 windows) of %4 (%5); the loss is per token, the accuracy the share of next tokens predicted
</source>
        <translation>已在 %4 的 %2 个验证词元（%3 个窗口）上评估 %1（%5）；损失按每个词元计，准确率为预测对的下一个词元所占比例
</translation>
    </message>
    <message>
        <source>Text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>Evaluation</source>
        <translation>评估</translation>
    </message>
    <message>
        <source>
  what-if (%1): the %2 weight tensors (%3 values) would be stored in at most %4 instead of %5, besides %6 of other tensors; train with the same flags to measure the test accuracy (a language model&apos;s validation loss) after
</source>
        <translation>
  假设分析（%1）：%2 个权重张量（%3 个值）这样存储最多占 %4，原为 %5，另有 %6 的其他张量；用相同选项训练即可测量变换后的测试准确率（语言模型为验证损失）
</translation>
    </message>
    <message>
        <source>memory of rank 0 (%1), predicted before the run and measured by the ledger:
</source>
        <translation>rank 0 的内存（%1），运行前的预测与账本的测量：
</translation>
    </message>
    <message>
        <source>rank %1 %2 (predicted %3)</source>
        <translation>rank %1 %2（预测 %3）</translation>
    </message>
    <message>
        <source>every rank&apos;s peak: %1
</source>
        <translation>每个 rank 的峰值：%1
</translation>
    </message>
    <message>
        <source>split the last layer&apos;s output columns over N ranks (tensor-parallel head; the body
runs whole on every rank; --ranks N, or N x D with --shard dp or zero1 for D
data-parallel replicas of it; with --pipeline K: --ranks K x N, the last stage&apos;s
head split; default 1: off)</source>
        <translation>把最后一层的输出列拆分到 N 个进程上（张量并行输出头；模型主体在每个进程上完整运行；
--ranks N，或配合 --shard dp 或 zero1 使用 N x D 个进程，得到它的 D 个数据并行副本；
配合 --pipeline K：--ranks K x N，拆分最后一个阶段的输出头；默认 1：关闭）</translation>
    </message>
    <message>
        <source>nf4 (NormalFloat) with a scale per %1 values, the scales quantised too</source>
        <translation>nf4（NormalFloat），每 %1 个值一个缩放系数，缩放系数本身也量化</translation>
    </message>
    <message>
        <source>QLoRA: with --lora, keep the frozen weights of the adapted
projections in int8 (a scale per row), int4 (a scale per 64 values) or
nf4 (QLoRA&apos;s 4-bit NormalFloat, its scales quantised too) while the
adapters train; each is dequantised when a layer uses it</source>
        <translation>QLoRA：配合 --lora，在训练适配器时把带适配器的投影层的冻结权重
以 int8（每行一个缩放系数）、int4（每 64 个值一个缩放系数）或
nf4（QLoRA 的 4 位 NormalFloat，缩放系数本身也量化）存储；
每层使用时再反量化</translation>
    </message>
    <message>
        <source>what-if: the test accuracy again with the weight tensors stored as int8 (a scale per
output row), int4 (a scale per 64 values) or nf4 (4-bit NormalFloat, a scale per
64 values, the scales quantised too); the weights file is not changed</source>
        <translation>假设分析：把权重张量以 int8（每个输出行一个缩放系数）、int4（每 64 个值
一个缩放系数）或 nf4（4 位 NormalFloat，每 64 个值一个缩放系数，缩放系数
本身也量化）存储后，再次测量测试准确率；权重文件不会改变</translation>
    </message>
    <message>
        <source>pipeline parallel: the layers in K stages of consecutive layers, one per rank
(--ranks K, or K x D with --shard dp or zero1 for D data-parallel replicas; micro-batches
from --accumulate or --micro-batch run in the 1F1B order; default 1: off)</source>
        <translation>流水线并行：把模型的层分成 K 个由连续层组成的阶段，每个进程一个
（--ranks K，或配合 --shard dp 或 zero1 使用 K x D 个进程，得到 D 个数据并行副本；
来自 --accumulate 或 --micro-batch 的微批次按 1F1B 顺序执行；默认 1：关闭）</translation>
    </message>
    <message>
        <source>built-in model: seed-cnn, mlp, lenet5, resnet-mini, vit-tiny, resnet20
(CIFAR-10), tabular-mlp (tables), gpt-tiny, gpt-char, gpt2-124m ... gpt2-1.5b,
llama-tiny, llama-3.2-1b, llama-3.2-3b, llama-3.1-8b, llama-3.1-70b, qwen2.5-7b,
mistral-7b (see headroom presets), drawn for the data&apos;s samples and classes (default:
the data&apos;s, tabular-mlp for a table, gpt-tiny for text, else seed-cnn); a
language model, resnet20 and tabular-mlp bring their own training settings
(headroom presets shows them), which the other flags override</source>
        <translation>内置模型：seed-cnn、mlp、lenet5、resnet-mini、vit-tiny、resnet20
（CIFAR-10）、tabular-mlp（表格）、gpt-tiny、gpt-char、gpt2-124m ... gpt2-1.5b、
llama-tiny、llama-3.2-1b、llama-3.2-3b、llama-3.1-8b、llama-3.1-70b、qwen2.5-7b、
mistral-7b（见 headroom presets），按数据的样本形状和类别构建（默认：由数据决定，
表格用 tabular-mlp，文本用 gpt-tiny，其余用 seed-cnn）；
语言模型、resnet20 和 tabular-mlp 自带训练设置
（headroom presets 列出），其他参数可覆盖它们</translation>
    </message>
    <message>
        <source>headroom train: no --preset or --model given: training %1 (--preset NAME for another)
</source>
        <translation>headroom train：未指定 --preset 或 --model：训练 %1（用 --preset NAME 选择其他模型）
</translation>
    </message>
    <message>
        <source>before its first step</source>
        <translation>在第一步之前</translation>
    </message>
    <message>
        <source>after step %1</source>
        <translation>在第 %1 步之后</translation>
    </message>
    <message>
        <source>%1 stopped making progress %2 (its process was stopped); every rank of the job was ended</source>
        <translation>%1 %2不再有进展（其进程被暂停）；作业的所有 rank 均已结束</translation>
    </message>
    <message>
        <source>the last good checkpoint is step %1 (%2); headroom train --resume %3 continues from it</source>
        <translation>最后一个完好的检查点是第 %1 步（%2）；headroom train --resume %3 可从它继续</translation>
    </message>
    <message>
        <source>headroom train: stopping every rank after the current step; ranks still running after %1 s are ended (SIGTERM, then SIGKILL %1 s later; again: end them now)
</source>
        <translation>headroom train：所有 rank 将在当前一步结束后停止；%1 秒后仍在运行的 rank 将被结束（SIGTERM，%1 秒后 SIGKILL；再按一次：立即结束）
</translation>
    </message>
    <message>
        <source>headroom train: ending every rank now (SIGTERM; SIGKILL in %1 s)
</source>
        <translation>headroom train：立即结束所有 rank（SIGTERM；%1 秒后 SIGKILL）
</translation>
    </message>
    <message>
        <source>headroom train: the ranks did not stop within %1 s; ending them (SIGTERM, then SIGKILL %1 s later)
</source>
        <translation>headroom train：rank 未在 %1 秒内停止；正在结束它们（SIGTERM，%1 秒后 SIGKILL）
</translation>
    </message>
    <message>
        <source>headroom train: the job did not end within %1 s of SIGTERM; killing every process of it
</source>
        <translation>headroom train：作业在 SIGTERM 后 %1 秒内未结束；正在杀死它的所有进程
</translation>
    </message>
    <message numerus="yes">
        <source>headroom train: %n process(es) of the job outlived mpirun and were killed
</source>
        <translation>
            <numerusform>headroom train：作业有 %n 个进程在 mpirun 之后仍在运行，已被杀死
</numerusform>
        </translation>
    </message>
    <message>
        <source>rank %1</source>
        <translation>rank %1</translation>
    </message>
    <message>
        <source>headroom train: %1 stopped making progress (its process was stopped); every rank of the job was ended
</source>
        <translation>headroom train：%1 不再有进展（其进程被暂停）；作业的所有 rank 均已结束
</translation>
    </message>
    <message>
        <source>headroom train: rank %1 cannot reach its parent at %2 (HEADROOM_EVENTS_ADDR); its events are not sent
</source>
        <translation>headroom train：rank %1 无法连接到其父进程 %2（HEADROOM_EVENTS_ADDR）；它的事件不会被发送
</translation>
    </message>
    <message>
        <source>headroom train: a rank ended and a stopped one did not within %1 s; ending them (SIGTERM, then SIGKILL %1 s later)
</source>
        <translation>headroom train：一个 rank 已结束，而被暂停的 rank 未在 %1 秒内结束；正在结束它们（SIGTERM，%1 秒后 SIGKILL）
</translation>
    </message>
    <message>
        <source>several ranks: start them on these machines (mpirun --host: rank 0 on the first;
SLOTS ranks on a machine, default 1); the ranks talk over the network and send
their events to this process (docs/distributed.md, &quot;Several hosts&quot;)</source>
        <translation>多个 rank：在这些机器上启动它们（mpirun --host：rank 0 在第一台上；
SLOTS 为一台机器上的 rank 数，默认 1）；各 rank 经网络通信，并把
事件发送给本进程（docs/distributed.md，“Several hosts”）</translation>
    </message>
    <message>
        <source>%1: &apos;%2&apos; is not HOST or HOST:SLOTS (names or addresses, separated by commas)</source>
        <translation>%1：“%2”不是 HOST 或 HOST:SLOTS（主机名或地址，以逗号分隔）</translation>
    </message>
    <message>
        <source>rank %1 (on %2)</source>
        <translation>rank %1（在 %2 上）</translation>
    </message>
    <message>
        <source>in step %1</source>
        <translation>在第 %1 步中</translation>
    </message>
    <message>
        <source>%1 stopped making progress %2: nothing was heard from it for %3 s (its process stopped, or its host was cut off)</source>
        <translation>%1 %2停止了进展：%3 秒内没有收到它的任何消息（它的进程已停止，或它的主机已断开）</translation>
    </message>
    <message>
        <source>%1 stopped making progress %2: its process kept running for %3 s without reaching the collective the other ranks wait in (a busy loop, or a call that never returns)</source>
        <translation>%1 %2停止了进展：它的进程持续运行了 %3 秒，却没有到达其他 rank 正在等待的集合通信（忙循环，或一个永不返回的调用）</translation>
    </message>
    <message>
        <source>%1; every rank of the job was ended</source>
        <translation>%1；作业的所有 rank 均已结束</translation>
    </message>
    <message>
        <source>headroom train: cannot listen for the ranks&apos; events on %1 (%2); a rank that stops making progress while it runs is not named, and the ranks&apos; events reach no one
</source>
        <translation>headroom train：无法在 %1 上监听各 rank 的事件（%2）；运行中停止进展的 rank 将无法被指出，各 rank 的事件也无人接收
</translation>
    </message>
    <message>
        <source>headroom train: the launcher cannot reach its parent at %1 (HEADROOM_EVENTS_ADDR); the ranks&apos; events are not passed on
</source>
        <translation>headroom train：启动器无法连接到位于 %1 的父进程（HEADROOM_EVENTS_ADDR）；各 rank 的事件不会被转发
</translation>
    </message>
    <message>
        <source>headroom train: %1; every rank of the job was ended
</source>
        <translation>headroom train：%1；作业的所有 rank 均已结束
</translation>
    </message>
    <message>
        <source>--hosts starts ranks on several machines; give --ranks N (N at least 2) too</source>
        <translation>--hosts 在多台机器上启动 rank；请同时给出 --ranks N（N 至少为 2）</translation>
    </message>
    <message>
        <source>headroom train: %1; the job ends (ranks still running after %2 s are ended)
</source>
        <translation>headroom train：%1；作业即将结束（%2 秒后仍在运行的 rank 将被结束）
</translation>
    </message>
    <message>
        <source>print one step&apos;s memory over its phases and the peak in one sentence
(plan: predicted; train: measured in the chosen step)</source>
        <translation>打印一个训练步骤各阶段的内存，并用一句话说明峰值
（plan：预测值；train：所选步骤的实测值）</translation>
    </message>
    <message>
        <source>write that timeline as Chrome Trace Event JSON (Perfetto, chrome://tracing)</source>
        <translation>将该时间线写为 Chrome Trace Event JSON（Perfetto、chrome://tracing）</translation>
    </message>
    <message>
        <source>train: the step whose timeline is recorded (default 0: the first steady
one, the second)</source>
        <translation>train：记录时间线的步骤（默认 0：第一个稳定步骤，即第二步）</translation>
    </message>
    <message>
        <source>Step timeline (docs/timeline.md)</source>
        <translation>步骤时间线（docs/timeline.md）</translation>
    </message>
    <message>
        <source>wrote the step&apos;s predicted timeline to %1
</source>
        <translation>已将该步骤的预测时间线写入 %1
</translation>
    </message>
    <message>
        <source>Step timeline: none (the run ended before the chosen step; see --timeline-step)
</source>
        <translation>步骤时间线：无（运行在所选步骤之前结束；见 --timeline-step）
</translation>
    </message>
    <message>
        <source>Step timeline (%1 phases, %2 events; * marks the peak):
</source>
        <translation>步骤时间线（%1 个阶段，%2 个事件；* 标记峰值）：
</translation>
    </message>
    <message>
        <source>phase</source>
        <translation>阶段</translation>
    </message>
    <message>
        <source>live</source>
        <translation>活跃</translation>
    </message>
    <message>
        <source>%1, micro-batch %2</source>
        <translation>%1，微批次 %2</translation>
    </message>
    <message>
        <source>Peak of the step: %1
</source>
        <translation>该步骤的峰值：%1
</translation>
    </message>
    <message>
        <source>could not write the trace to %1 (%2); choose a writable file with --trace</source>
        <translation>无法将跟踪写入 %1（%2）；请用 --trace 选择可写的文件</translation>
    </message>
    <message>
        <source>measured step %1</source>
        <translation>实测步骤 %1</translation>
    </message>
    <message>
        <source>wrote the measured timeline of step %1 to %2
</source>
        <translation>已将步骤 %1 的实测时间线写入 %2
</translation>
    </message>
    <message>
        <source>the folder of --trace %1 does not exist; create it or choose another file</source>
        <translation>--trace %1 所在的文件夹不存在；请先创建它或选择其他文件</translation>
    </message>
    <message>
        <source>byte (default), char, bpe:N (SentencePiece BPE of N tokens, 260 to
1000000, trained on the training text; stored next to the weights), or a
model&apos;s tokenizer.json / tokenizer.model file (or the folder holding it)</source>
        <translation>byte（默认）、char、bpe:N（N 个 token 的 SentencePiece BPE，260 到
1000000，在训练文本上训练；与权重存放在一起），或模型自带的
tokenizer.json / tokenizer.model 文件（或包含它的文件夹）</translation>
    </message>
    <message>
        <source>unknown tokenizer &apos;%1&apos; for %2; use byte, char, bpe:N, or a tokenizer.json or tokenizer.model file (or a folder holding one)</source>
        <translation>%2 的分词器“%1”未知；请使用 byte、char、bpe:N，或 tokenizer.json、tokenizer.model 文件（或包含它的文件夹）</translation>
    </message>
    <message>
        <source>instruction data (jsonl:FILE): auto (default: from the tokenizer&apos;s special
tokens), plain, llama3, chatml (Qwen) or mistral</source>
        <translation>指令数据（jsonl:FILE）：auto（默认：由分词器的特殊 token
决定）、plain、llama3、chatml（Qwen）或 mistral</translation>
    </message>
    <message>
        <source>chat template</source>
        <translation>对话模板</translation>
    </message>
    <message>
        <source>instruction data: pad (default: one row a sequence, padded or cut) or pack
(the rows joined and cut into sequences)</source>
        <translation>指令数据：pad（默认：每行一个序列，填充或截断）或 pack
（各行拼接后切成序列）</translation>
    </message>
    <message>
        <source>sequence layout</source>
        <translation>序列布局</translation>
    </message>
    <message>
        <source>with --lora on a LLaMA-family model: the projections that get adapters,
by peft&apos;s names q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj
(default: q_proj,v_proj, peft&apos;s for the family)</source>
        <translation>与 --lora 一起用于 LLaMA 系列模型：加适配器的投影，
使用 peft 的名称 q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj
（默认：q_proj,v_proj，即 peft 对该系列的默认值）</translation>
    </message>
    <message>
        <source>headroom export: %1
</source>
        <translation>headroom export：%1
</translation>
    </message>
    <message>
        <source>wrote %1 (%2 files, %3 of weights): %4
</source>
        <translation>已写入 %1（%2 个文件，权重 %3）：%4
</translation>
    </message>
    <message>
        <source>a Hugging Face config.json, or the folder that holds it:
LlamaForCausalLM, MistralForCausalLM or Qwen2ForCausalLM, built for --seq
tokens (default 2048); trains with gpt-tiny&apos;s settings unless flags say
otherwise (docs/transformers.md, &quot;Hugging Face models&quot;)</source>
        <translation>Hugging Face 的 config.json 或包含它的文件夹：
LlamaForCausalLM、MistralForCausalLM 或 Qwen2ForCausalLM，按 --seq
个词元构建（默认 2048）；除非另有选项，按 gpt-tiny 的设置训练
（docs/transformers.md，“Hugging Face models”）</translation>
    </message>
    <message>
        <source>write a Hugging Face model folder: config.json, model.safetensors
(LoRA adapters merged), the tokenizer file</source>
        <translation>写出 Hugging Face 模型文件夹：config.json、model.safetensors
（LoRA 适配器已合并）以及分词器文件</translation>
    </message>
    <message>
        <source>split the weights into shards of at most SIZE, with
model.safetensors.index.json (default 5GB, as transformers)</source>
        <translation>把权重拆成每个不超过 SIZE 的分片，并附
model.safetensors.index.json（默认 5GB，与 transformers 相同）</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>As asked (batch %1, %2): %3 of %4, %5
</source>
        <translation>按要求（批大小 %1，%2）：%3 / %4，%5
</translation>
    </message>
    <message>
        <source>Largest batch that fits at sequence %1: %2; longest sequence at batch %3: %4 (the model&apos;s limit %5)

</source>
        <translation>序列长度 %1 下能放下的最大批大小：%2；批大小 %3 下能放下的最长序列：%4（模型上限 %5）

</translation>
    </message>
    <message>
        <source>Fine-tuning on 1 to 8 cards of %1 each (per-card memory at this batch, sequence and precision, from the same search as --all;
checkpointing &quot;on&quot; is %2; ZeRO-3 on 1 card keeps the parameters in host memory; &quot;(over)&quot;: does not fit;
&quot;-&quot;: no such configuration):

</source>
        <translation>在 1 到 8 张每张 %1 的卡上微调（每张卡在此批大小、序列长度和精度下的内存，来自与 --all 相同的搜索；
检查点“on”即 %2；单卡 ZeRO-3 把参数放在主机内存；“（超出）”：放不下；
“-”：没有这种配置）：

</translation>
    </message>
    <message>
        <source>re-run the model over the whole context for every token instead of keeping keys and values (slower; the same tokens)</source>
        <translation>每个 token 都对整个上下文重新运行模型，而不保留键和值（更慢；生成的 token 相同）</translation>
    </message>
    <message>
        <source>key/value cache %1 MB</source>
        <translation>键值缓存 %1 MB</translation>
    </message>
    <message>
        <source>no key/value cache</source>
        <translation>无键值缓存</translation>
    </message>
    <message>
        <source>generated %1 tokens in %2 s (%3 tokens/s; %4 tokenizer, context %5, %6)
</source>
        <translation>在 %2 秒内生成了 %1 个 token（%3 token/秒；%4 分词器，上下文 %5，%6）
</translation>
    </message>
    <message>
        <source>wrote %1 (%2, %3): %4 nodes, opset %5, input &quot;input&quot; (batch, %6), output &quot;logits&quot; (batch, %7)%8
</source>
        <translation>已写入 %1（%2，%3）：%4 个节点，opset %5，输入 &quot;input&quot; (batch, %6)，输出 &quot;logits&quot; (batch, %7)%8
</translation>
    </message>
    <message>
        <source>; the what-if&apos;s weights</source>
        <translation>；假设分析的权重</translation>
    </message>
    <message>
        <source>--type and --ollama are for a GGUF file: give --gguf FILE</source>
        <translation>--type 和 --ollama 用于 GGUF 文件：请同时给出 --gguf FILE</translation>
    </message>
    <message>
        <source>--prune and --quantize go with --onnx FILE</source>
        <translation>--prune 和 --quantize 只能与 --onnx FILE 一起使用</translation>
    </message>
    <message>
        <source>wrote %1 (%2, %3, %4 tensors, %5; tokenizer %6%7)
</source>
        <translation>已写入 %1（%2，%3，%4 个张量，%5；分词器 %6%7）
</translation>
    </message>
    <message>
        <source>, chat template %1</source>
        <translation>，对话模板 %1</translation>
    </message>
    <message>
        <source>wrote %1 (for ollama create)
</source>
        <translation>已写入 %1（供 ollama create 使用）
</translation>
    </message>
    <message>
        <source>fashion-mnist (default), mnist, idx:DIR, synthetic, cifar10, cifar10:DIR,
csv:FILE or tsv:FILE (a table, with --target); for language models
text:fortunes or text:FILE (UTF-8), or instruction rows jsonl:FILE
({&quot;prompt&quot;, &quot;completion&quot;}, {&quot;messages&quot;: [...]}, Alpaca&apos;s {&quot;instruction&quot;,
&quot;input&quot;, &quot;output&quot;} or ShareGPT&apos;s {&quot;conversations&quot;: [...]}, a row a line
or one .json array)</source>
        <translation>fashion-mnist（默认）、mnist、idx:DIR、synthetic、cifar10、cifar10:DIR、
csv:FILE 或 tsv:FILE（表格，配合 --target）；语言模型用
text:fortunes 或 text:FILE（UTF-8），或指令数据 jsonl:FILE
（{&quot;prompt&quot;, &quot;completion&quot;}、{&quot;messages&quot;: [...]}、Alpaca 的 {&quot;instruction&quot;,
&quot;input&quot;, &quot;output&quot;} 或 ShareGPT 的 {&quot;conversations&quot;: [...]}，每行一条
或一个 .json 数组）</translation>
    </message>
    <message>
        <source>write an image or table model as an ONNX file (opset 17, the
input&apos;s normalisation in the graph; with --prune/--quantize the
what-if&apos;s weights)</source>
        <translation>将图像或表格模型写为 ONNX 文件（opset 17，输入的归一化
包含在计算图中；配合 --prune/--quantize 时写入
假设分析的权重）</translation>
    </message>
    <message>
        <source>or: write one GGUF file for llama.cpp, Ollama and LM Studio (the
tokenizer and chat template inside; LoRA adapters merged)</source>
        <translation>或：写出一个供 llama.cpp、Ollama 和 LM Studio 使用的 GGUF 文件（内含
分词器和对话模板；LoRA 适配器已合并）</translation>
    </message>
    <message>
        <source>the GGUF file&apos;s weight type: f32, f16, bf16 or q8_0 (default f16;
1-D tensors f32, q8_0 rows not a multiple of 32 f16)</source>
        <translation>GGUF 文件的权重类型：f32、f16、bf16 或 q8_0（默认 f16；
一维张量为 f32，q8_0 下行长不是 32 的倍数的矩阵为 f16）</translation>
    </message>
    <message>
        <source>GGUF type</source>
        <translation>GGUF 类型</translation>
    </message>
    <message>
        <source>with --gguf: an Ollama Modelfile beside the file (FROM, the chat
template in Ollama&apos;s syntax, PARAMETER stop); then: ollama create NAME</source>
        <translation>与 --gguf 一起使用：在该文件旁写出 Ollama 的 Modelfile（FROM、按 Ollama
语法写的对话模板、PARAMETER stop）；之后运行：ollama create NAME</translation>
    </message>
    <message>
        <source>with --init-from a peft adapter folder: its base model&apos;s folder, when the adapter&apos;s
base_model_name_or_path is a hub name or a path not on this machine</source>
        <translation>与指向 peft 适配器文件夹的 --init-from 同用：其基础模型的文件夹，用于适配器的
base_model_name_or_path 是 Hub 名称或本机上不存在的路径时</translation>
    </message>
    <message>
        <source>Weights in %1: %2 parameters stored as %3 in %4 file(s), %5

</source>
        <translation>%1 中的权重：%2 个参数，以 %3 存储于 %4 个文件，%5

</translation>
    </message>
    <message>
        <source>write a trained model as a Hugging Face model folder, a peft adapter, a GGUF file or an ONNX file</source>
        <translation>将训练好的模型写成 Hugging Face 模型文件夹、peft 适配器、GGUF 文件或 ONNX 文件</translation>
    </message>
    <message>
        <source>RUN is a run folder or its model.safetensors. --hf DIR (a LLaMA-family model): DIR gets
config.json, model.safetensors (sharded with model.safetensors.index.json above --shard-size)
and the run&apos;s tokenizer file; transformers&apos; from_pretrained(DIR) loads it. A LoRA run&apos;s adapters
are merged into the weights; its run folder holds them in peft&apos;s layout as well
(adapter_model.safetensors, adapter_config.json); --peft DIR writes them into DIR.
--gguf FILE (a LLaMA-family model): one GGUF file that llama.cpp, Ollama and LM Studio load: the
weights in --type (f16 unless asked), the tokenizer (byte, or a byte-level BPE tokenizer.json) and
the chat template of its family. A model or tokenizer GGUF cannot hold is refused, nothing written.
--onnx FILE (an image or table model): one ONNX file at opset 17 for ONNX Runtime, input
&quot;input&quot; (batch, C, H, W) pixels on the [0, 1] scale or (batch, F) raw table features, the
run&apos;s normalisation in the graph, output &quot;logits&quot; (batch, classes); docs/export.md.</source>
        <translation>RUN 是运行文件夹或其中的 model.safetensors。--hf DIR（LLaMA 系列模型）：DIR 中写入
config.json、model.safetensors（超过 --shard-size 时分片，并附 model.safetensors.index.json）
以及该运行的分词器文件；transformers 的 from_pretrained(DIR) 可加载。LoRA 运行的适配器
会合并进权重；其运行文件夹也以 peft 的布局保存适配器
（adapter_model.safetensors、adapter_config.json）；--peft DIR 把它们写入 DIR。
--gguf FILE（LLaMA 系列模型）：写出一个 llama.cpp、Ollama 和 LM Studio 可加载的 GGUF 文件：
权重为 --type 指定的类型（默认 f16），另含分词器（字节分词器，或字节级 BPE tokenizer.json）以及
该模型家族的对话模板。GGUF 无法容纳的模型或分词器会被拒绝，不写出任何文件。
--onnx FILE（图像或表格模型）：供 ONNX Runtime 使用的单个 opset 17 ONNX 文件，输入
&quot;input&quot; 为 (batch, C, H, W) 的 [0, 1] 范围像素或 (batch, F) 的原始表格特征，该运行的
归一化包含在计算图中，输出 &quot;logits&quot; (batch, classes)；见 docs/export.md。</translation>
    </message>
    <message>
        <source>give one of --hf DIR (a Hugging Face model folder), --peft DIR (a LoRA run&apos;s peft adapter), --gguf FILE (a GGUF file) and --onnx FILE (an ONNX file)</source>
        <translation>请给出 --hf DIR（Hugging Face 模型文件夹）、--peft DIR（LoRA 运行的 peft 适配器）、--gguf FILE（GGUF 文件）和 --onnx FILE（ONNX 文件）中的一个</translation>
    </message>
    <message>
        <source>wrote %1 (peft adapter: r %2, alpha %3, %4; %5 of adapters): adapter_config.json, adapter_model.safetensors
</source>
        <translation>已写入 %1（peft 适配器：r %2，alpha %3，%4；适配器 %5）：adapter_config.json、adapter_model.safetensors
</translation>
    </message>
    <message>
        <source>or: write a LoRA run&apos;s adapters as peft&apos;s adapter folder
(adapter_config.json, adapter_model.safetensors)</source>
        <translation>或：把 LoRA 运行的适配器写成 peft 的适配器文件夹
（adapter_config.json、adapter_model.safetensors）</translation>
    </message>
    <message>
        <source>compute on the weights as headroom export --gguf --type T stores them (f32, f16, bf16
or q8_0; a LoRA run merged): what the exported file will say</source>
        <translation>在 headroom export --gguf --type T 存储的权重上计算（f32、f16、bf16
或 q8_0；LoRA 运行先合并）：即导出文件将给出的结果</translation>
    </message>
    <message>
        <source>also print the prompt&apos;s and the generated token ids (two lines on stderr)</source>
        <translation>同时打印提示词和生成内容的词元 id（stderr 上的两行）</translation>
    </message>
    <message>
        <source>with --run: the model the run started from (a LoRA run&apos;s adapters switched off, else its
--init-from weights or step-0 checkpoint), to compare with the trained one</source>
        <translation>与 --run 一起：运行开始时的模型（LoRA 运行关闭其适配器，否则为其
--init-from 权重或第 0 步检查点），用来与训练后的模型比较</translation>
    </message>
    <message>
        <source>--before compares a run with the model it started from: give --run RUN</source>
        <translation>--before 把一次运行与它开始时的模型比较：请给出 --run RUN</translation>
    </message>
    <message>
        <source>--before and --as-exported do not go together: --as-exported shows what the exported trained model says; drop one of them</source>
        <translation>--before 与 --as-exported 不能同时使用：--as-exported 显示导出后的训练模型会输出什么；请去掉其中一个</translation>
    </message>
    <message>
        <source>prompt ids: %1
</source>
        <translation>提示词 id：%1
</translation>
    </message>
    <message>
        <source>generated ids: %1
</source>
        <translation>生成的 id：%1
</translation>
    </message>
</context>
<context>
    <name>OutOfMemoryAdvice</name>
    <message>
        <source>the planner could not search for a configuration: %1</source>
        <translation>规划器无法搜索配置：%1</translation>
    </message>
    <message>
        <source>no combination of precision, checkpointing, micro-batches and offload fits in %1 at batch %2; lower --batch, make the model smaller or raise the memory limit</source>
        <translation>在批次大小 %2 下，没有任何精度、梯度检查点、微批次和卸载的组合能放进 %1；请降低 --batch、缩小模型或提高内存上限</translation>
    </message>
    <message>
        <source>this fits in %1 (predicted %2, %3x the step time): %4</source>
        <translation>这样可以放进 %1（预测 %2，单步时间为 %3 倍）：%4</translation>
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
        <source>no combination of precision, checkpointing, micro-batches and offload fits in %1 at batch %2 as set up; sharded, it %3. Otherwise lower --batch or make the model smaller</source>
        <translation>按当前设置，在批次大小 %2 下，没有任何精度、梯度检查点、微批次和卸载的组合能放进 %1；分片后%3。否则请降低 --batch 或缩小模型</translation>
    </message>
    <message>
        <source>parameters, gradients and optimizer state in host memory (ZeRO-3 on one rank)</source>
        <translation>参数、梯度和优化器状态在主机内存中（单个 rank 上的 ZeRO-3）</translation>
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
    <message>
        <source>full fine-tuning</source>
        <translation>全量微调</translation>
    </message>
    <message>
        <source>LoRA r=%1</source>
        <translation>LoRA r=%1</translation>
    </message>
    <message>
        <source>QLoRA nf4 r=%1</source>
        <translation>QLoRA nf4 r=%1</translation>
    </message>
    <message>
        <source>method</source>
        <translation>方法</translation>
    </message>
    <message>
        <source>checkpointing</source>
        <translation>梯度检查点</translation>
    </message>
    <message>
        <source>ZeRO-3</source>
        <translation>ZeRO-3</translation>
    </message>
    <message>
        <source>1 card</source>
        <translation>1 张卡</translation>
    </message>
    <message>
        <source>%1 cards</source>
        <translation>%1 张卡</translation>
    </message>
    <message>
        <source>on</source>
        <translation>开</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
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
        <source>%1 (over)</source>
        <translation>%1（超出）</translation>
    </message>
</context>
<context>
    <name>RankRelay</name>
    <message>
        <source>cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <source>could not start %1: %2</source>
        <translation>无法启动 %1：%2</translation>
    </message>
    <message>
        <source>rank %1 sent an event that could not be read (%2); it is skipped</source>
        <translation>rank %1 发送了无法读取的事件（%2）；已跳过</translation>
    </message>
    <message>
        <source>rank %1: %2</source>
        <translation>rank %1：%2</translation>
    </message>
    <message>
        <source>exit status %1</source>
        <translation>退出状态 %1</translation>
    </message>
    <message>
        <source>the launcher crashed</source>
        <translation>启动器崩溃了</translation>
    </message>
    <message>
        <source>the ranks ended before rank 0 finished the run (%1)</source>
        <translation>在 rank 0 完成运行之前各 rank 已结束（%1）</translation>
    </message>
    <message>
        <source>the ranks ended before rank 0 finished the run (%1): %2</source>
        <translation>在 rank 0 完成运行之前各 rank 已结束（%1）：%2</translation>
    </message>
    <message>
        <source>cannot create a temporary folder for the ranks&apos; configuration: %1</source>
        <translation>无法为各 rank 的配置创建临时文件夹：%1</translation>
    </message>
    <message>
        <source>cannot listen for the ranks&apos; events: %1</source>
        <translation>无法监听各 rank 的事件：%1</translation>
    </message>
</context>
<context>
    <name>ReportCommand</name>
    <message>
        <source>headroom report: %1
</source>
        <translation>headroom report：%1
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
    <message>
        <source>Ranks</source>
        <translation>各 rank</translation>
    </message>
    <message>
        <source>%1 ranks, sharding stage %2. Each rank handed its communicator %3 per step and spent %4 per step waiting on communication (rank 0&apos;s figures).</source>
        <translation>%1 个 rank，分片阶段 %2。每个 rank 每步交给通信器 %3，每步等待通信 %4（rank 0 的数据）。</translation>
    </message>
    <message>
        <source>Measured is each rank&apos;s memory ledger at its peak; resident is the rank&apos;s process at its peak as the operating system counts it (the ledger&apos;s host side, the runtime, the data and the libraries).</source>
        <translation>实测为每个 rank 内存账本的峰值；常驻为操作系统统计的该 rank 进程峰值（账本的主机部分、运行时、数据和库）。</translation>
    </message>
    <message>
        <source>Rank</source>
        <translation>rank</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>批次</translation>
    </message>
    <message>
        <source>Resident peak (OS)</source>
        <translation>常驻峰值（操作系统）</translation>
    </message>
    <message>
        <source>%1 pruned</source>
        <translation>剪枝 %1</translation>
    </message>
    <message>
        <source>int8 (a scale per output row)</source>
        <translation>int8（每个输出行一个缩放因子）</translation>
    </message>
    <message>
        <source>int4 (a scale per %1 values)</source>
        <translation>int4（每 %1 个值一个缩放因子）</translation>
    </message>
    <message>
        <source>Accuracy pruned/quantised</source>
        <translation>剪枝/量化后的准确率</translation>
    </message>
    <message>
        <source>%1; weights %2 instead of %3</source>
        <translation>%1；权重 %2，原为 %3</translation>
    </message>
    <message>
        <source>The weights the run wrote, evaluated on %1 test samples as trained and again %2. The transform touches the %3 weight tensors with two or more dimensions (%4 values, %5 of them zero after); biases, normalisation weights and statistics stay as they are. The largest change to a weight was %6.</source>
        <translation>本次运行写出的权重，在 %1 个测试样本上按训练所得评估一次，再按 %2 评估一次。变换作用于 %3 个二维及以上的权重张量（%4 个值，变换后其中 %5 个为零）；偏置、归一化权重和统计量保持不变。单个权重的最大变化为 %6。</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>Stored size</source>
        <translation>存储大小</translation>
    </message>
    <message>
        <source>as trained (f32)</source>
        <translation>训练所得（f32）</translation>
    </message>
    <message>
        <source>Stored size counts 4 bytes a value as f32; quantised, bits / 8 a value and 4 bytes a scale; pruned, a bitmask of 1 bit a value and the non-zero values. The file on disk is not changed: this is a what-if (headroom eval --prune/--quantize measures the same on any weights file).</source>
        <translation>存储大小按 f32 每个值 4 字节计；量化时每个值 位数/8 字节，每个缩放因子 4 字节；剪枝时每个值 1 位的位掩码加上非零值。磁盘上的文件不变：这是一次假设分析（headroom eval --prune/--quantize 可对任何权重文件做同样的测量）。</translation>
    </message>
    <message>
        <source>What-if: pruned and quantised weights</source>
        <translation>假设分析：剪枝与量化后的权重</translation>
    </message>
    <message>
        <source>%1 ranks with a tensor-parallel head: the last layer&apos;s output columns are split over the ranks, each trains the rest of the model whole on the whole batch. Each rank handed its communicator %2 per step and spent %3 per step waiting on communication (rank 0&apos;s figures).</source>
        <translation>%1 个 rank，使用张量并行输出头：最后一层的输出列拆分到各 rank 上，每个 rank 在整个批次上完整训练模型的其余部分。每个 rank 每步交给通信器 %2，每步等待通信 %3（rank 0 的数据）。</translation>
    </message>
    <message>
        <source>a slice of the head</source>
        <translation>输出头的一部分</translation>
    </message>
    <message>
        <source>head columns %1–%2 of %3</source>
        <translation>输出头第 %1–%2 列（共 %3 列）</translation>
    </message>
    <message>
        <source>1/%1 of the optimizer state</source>
        <translation>优化器状态的 1/%1</translation>
    </message>
    <message>
        <source>1/%1 of the optimizer state and gradients</source>
        <translation>优化器状态和梯度的 1/%1</translation>
    </message>
    <message>
        <source>1/%1 of the parameters, gradients and optimizer state</source>
        <translation>参数、梯度和优化器状态的 1/%1</translation>
    </message>
    <message>
        <source>the whole model</source>
        <translation>整个模型</translation>
    </message>
    <message>
        <source>Holds</source>
        <translation>持有</translation>
    </message>
    <message>
        <source>stage %1: layers %2–%3</source>
        <translation>阶段 %1：层 %2–%3</translation>
    </message>
    <message>
        <source>stage %1: layers %2–%3, head columns %4–%5 of %6</source>
        <translation>阶段 %1：层 %2–%3，输出头第 %4–%5 列（共 %6 列）</translation>
    </message>
    <message>
        <source>%1 pipeline stages of consecutive layers, each on %2 ranks (%3 ranks): the last stage&apos;s output columns are split over its ranks, the earlier stages&apos; ranks run the same rows, every rank on the whole batch in micro-batches (1F1B schedule). Each rank handed its communicator %4 per training step and spent %5 per step waiting on communication (rank 0&apos;s figures).</source>
        <translation>%1 个由连续层组成的流水线阶段，每个阶段占 %2 个进程（共 %3 个进程）：最后一个阶段的输出列拆分到其各进程上，之前各阶段的进程处理相同的行，每个进程都以微批次（1F1B 调度）处理整个批次。每个进程每个训练步交给通信器 %4，每步等待通信 %5（进程 0 的数据）。</translation>
    </message>
    <message>
        <source>Parameters and gradients</source>
        <translation>参数和梯度</translation>
    </message>
    <message>
        <source>in host memory (ZeRO-Infinity style): each unit is brought to the device one unit ahead of its use, its gradients sent back after its backward</source>
        <translation>在主机内存中（ZeRO-Infinity 方式）：每个单元在使用前提前一个单元送到设备上，其梯度在反向传播后传回</translation>
    </message>
    <message>
        <source>stage %1 of replica %2: layers %3–%4</source>
        <translation>副本 %2 的阶段 %1：层 %3–%4</translation>
    </message>
    <message>
        <source>: %1 trained values against %2 frozen</source>
        <translation>：训练 %1 个数值，冻结 %2 个</translation>
    </message>
    <message>
        <source>, their input dropped with probability %1 while training</source>
        <translation>，训练时其输入以概率 %1 丢弃</translation>
    </message>
    <message>
        <source>; test accuracy %1 before training, %2 after</source>
        <translation>；测试准确率训练前 %1，训练后 %2</translation>
    </message>
    <message>
        <source>LoRA</source>
        <translation>LoRA</translation>
    </message>
    <message>
        <source>rank %1 adapters (scale %2) on every linear layer and transformer projection, the rest frozen</source>
        <translation>每个线性层和每个 Transformer 投影上有秩为 %1 的适配器（缩放 %2），其余冻结</translation>
    </message>
    <message>
        <source>; test loss %1 before, %2 after</source>
        <translation>；测试损失训练前 %1，训练后 %2</translation>
    </message>
    <message>
        <source> (%1 of them stored %2 while training: QLoRA)</source>
        <translation>（其中 %1 个在训练期间以 %2 存储：QLoRA）</translation>
    </message>
    <message>
        <source>Validation loss pruned/quantised</source>
        <translation>剪枝/量化后的验证损失</translation>
    </message>
    <message>
        <source>The weights the run wrote, evaluated on %1 validation tokens as trained and again %2: the loss per token, its perplexity and the share of next tokens predicted. The transform touches the %3 weight tensors with two or more dimensions, the embeddings among them (%4 values, %5 of them zero after); biases and normalisation weights stay as they are. The largest change to a weight was %6.</source>
        <translation>本次运行写出的权重，在 %1 个验证词元上按训练所得评估一次，再按 %2 评估一次：每个词元的损失、其困惑度以及预测对的下一个词元所占比例。变换作用于 %3 个二维及以上的权重张量，其中包括嵌入（%4 个值，变换后其中 %5 个为零）；偏置和归一化权重保持不变。单个权重的最大变化为 %6。</translation>
    </message>
    <message>
        <source>Validation loss</source>
        <translation>验证损失</translation>
    </message>
    <message>
        <source>Perplexity</source>
        <translation>困惑度</translation>
    </message>
    <message>
        <source>Token accuracy</source>
        <translation>词元准确率</translation>
    </message>
    <message>
        <source>A tensor-parallel head over %1 ranks times %2 data-parallel replicas (%3 ranks): in each replica the last layer&apos;s output columns are split over its ranks, each trains the rest of the model whole on the replica&apos;s share of the batch, and the replicas sum their gradients before the update. Each rank handed its communicator %4 per step and spent %5 per step waiting on communication (rank 0&apos;s figures).</source>
        <translation>张量并行输出头拆分到 %1 个进程，乘以 %2 个数据并行副本（共 %3 个进程）：每个副本内，最后一层的输出列拆分到该副本的各进程上，每个进程在副本分得的那部分批次上完整训练模型的其余部分，各副本在更新前对梯度求和。每个进程每步交给通信器 %4，每步等待通信 %5（进程 0 的数据）。</translation>
    </message>
    <message>
        <source>head columns %1–%2 of %3, replica %4</source>
        <translation>输出头第 %1–%2 列（共 %3 列），副本 %4</translation>
    </message>
    <message>
        <source>%1 pipeline stages of consecutive layers times %2 data-parallel replicas (%3 ranks): each replica takes its share of the batch through its stages in micro-batches (1F1B schedule), and the replicas of a stage sum its gradients before the update. Each rank handed its communicator %4 per training step (activations and their gradients, and the gradients&apos; all-reduce) and spent %5 per step waiting on communication (rank 0&apos;s figures).</source>
        <translation>%1 个由连续层组成的流水线阶段，乘以 %2 个数据并行副本（共 %3 个进程）：每个副本把它分得的那部分批次以微批次（1F1B 调度）送过它的各个阶段，同一阶段的各副本在更新前对该阶段的梯度求和。每个进程每个训练步交给通信器 %4（激活值及其梯度，以及梯度的 all-reduce），每步等待通信 %5（进程 0 的数据）。</translation>
    </message>
    <message>
        <source>%1 pipeline stages of consecutive layers, one per rank, each on the whole batch in micro-batches (1F1B schedule). Each rank handed its communicator %2 per training step (activations and their gradients) and spent %3 per step waiting on communication (rank 0&apos;s figures).</source>
        <translation>%1 个由连续层组成的流水线阶段，每个进程一个，各自以微批次（1F1B 调度）处理整个批次。每个进程每个训练步交给通信器 %2（激活值及其梯度），每步等待通信 %3（进程 0 的数据）。</translation>
    </message>
    <message>
        <source>nf4 (NormalFloat, a scale per %1 values, the scales quantised too)</source>
        <translation>nf4（NormalFloat，每 %1 个值一个缩放系数，缩放系数本身也量化）</translation>
    </message>
    <message>
        <source>Inside step %1: %2.</source>
        <translation>第 %1 步内部：%2。</translation>
    </message>
    <message>
        <source>the Hugging Face config %1</source>
        <translation>Hugging Face 配置 %1</translation>
    </message>
    <message>
        <source>Before is this LoRA run&apos;s model with its adapters switched off: the base it started from. After is the trained model.</source>
        <translation>“之前”是关闭适配器的这次 LoRA 运行的模型，即它开始时的基座模型。“之后”是训练后的模型。</translation>
    </message>
    <message>
        <source>Before is the run&apos;s checkpoint at step 0 (%1). After is the trained model.</source>
        <translation>“之前”是这次运行第 0 步的检查点（%1）。“之后”是训练后的模型。</translation>
    </message>
    <message>
        <source>Before is the weights the run started from (%1). After is the trained model.</source>
        <translation>“之前”是这次运行开始时的权重（%1）。“之后”是训练后的模型。</translation>
    </message>
    <message>
        <source>Before is the model at step 0, ahead of the first update. After is the trained model.</source>
        <translation>“之前”是第 0 步、第一次更新之前的模型。“之后”是训练后的模型。</translation>
    </message>
    <message>
        <source>Before</source>
        <translation>之前</translation>
    </message>
    <message>
        <source>After</source>
        <translation>之后</translation>
    </message>
    <message>
        <source>Greedy</source>
        <translation>贪心</translation>
    </message>
    <message>
        <source>Sampled (temperature %1, seed %2)</source>
        <translation>采样（温度 %1，种子 %2）</translation>
    </message>
    <message>
        <source>The prompt, then %1 new tokens from each model (headroom generate --run RUN [--before] prints the same).</source>
        <translation>提示词之后是每个模型生成的 %1 个新词元（headroom generate --run RUN [--before] 输出相同的内容）。</translation>
    </message>
    <message>
        <source>Before and after</source>
        <translation>训练前后对比</translation>
    </message>
</context>
<context>
    <name>RunController</name>
    <message>
        <source>%1 is a file, not a folder; give a folder</source>
        <translation>%1 是文件而不是文件夹；请给出一个文件夹</translation>
    </message>
    <message>
        <source>%1 is not writable; pick a folder you can write to</source>
        <translation>%1 不可写；请选择一个你有写权限的文件夹</translation>
    </message>
    <message>
        <source>%1 cannot be created: %2 is not a writable folder</source>
        <translation>无法创建 %1：%2 不是可写的文件夹</translation>
    </message>
    <message>
        <source>a run is in progress; stop it first</source>
        <translation>有一个运行正在进行；请先停止它</translation>
    </message>
    <message>
        <source>This run is not recorded in the history: %1</source>
        <translation>本次运行未记入运行历史：%1</translation>
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
    <message>
        <source>Cannot prepare the run history %1 (%2); if another program holds it locked, close that program or try again.</source>
        <translation>无法准备运行历史 %1（%2）；如果另一个程序锁定了它，请关闭该程序或重试。</translation>
    </message>
    <message>
        <source>Cannot prepare the run history %1: %2</source>
        <translation>无法准备运行历史 %1：%2</translation>
    </message>
</context>
<context>
    <name>RunText</name>
    <message>
        <source>trains with: %1 (%2 tokens), %3 lr %4 to %5 (%6 warm-up steps, cosine), weight decay %7, gradient norm clipped to %8, batch %9, %10 steps</source>
        <translation>训练设置：%1（%2 词元），%3 学习率 %4 降至 %5（%6 步预热，余弦），权重衰减 %7，梯度范数裁剪到 %8，批大小 %9，%10 步</translation>
    </message>
    <message>
        <source>trains with: %1, %2 lr %3 (%4 schedule), weight decay %5, batch %6, %7 epochs</source>
        <translation>训练设置：%1，%2 学习率 %3（%4 调度），权重衰减 %5，批大小 %6，%7 个 epoch</translation>
    </message>
    <message>
        <source>the data you give (--data)</source>
        <translation>你指定的数据（--data）</translation>
    </message>
    <message>
        <source>%1, the model for tables</source>
        <translation>%1，表格数据的模型</translation>
    </message>
    <message>
        <source>%1, the language model for text</source>
        <translation>%1，文本数据的语言模型</translation>
    </message>
    <message>
        <source>%1, the model for images</source>
        <translation>%1，图像数据的模型</translation>
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
    <message>
        <source>the window&apos;s Preferences have no webhook URL; set one there (Notifications) or give a URL</source>
        <translation>窗口的“首选项”中没有 webhook URL；请在其中（通知）设置一个，或给出 URL</translation>
    </message>
    <message>
        <source>unknown message format &apos;%1&apos;; use %2</source>
        <translation>未知的消息格式“%1”；请使用 %2</translation>
    </message>
    <message>
        <source>&apos;%1&apos; is not a webhook: give an http(s) URL, FORMAT:URL or &apos;settings&apos;</source>
        <translation>“%1”不是 webhook：请给出 http(s) URL、FORMAT:URL 或 &apos;settings&apos;</translation>
    </message>
</context>
<context>
    <name>backend.loss_unsupported</name>
    <message>
        <source>%1 cannot run %2 in %3, which the loss (%4) needs; train it on another device (--device) or in another precision (--precision)</source>
        <translation>%1 无法以 %3 运行 %2，而损失函数（%4）需要它；请在其他设备上训练（--device）或换用其他精度（--precision）</translation>
    </message>
</context>
<context>
    <name>backend.op_unsupported</name>
    <message>
        <source>%1 cannot run %2 in %3, which layer %4 needs; train it on another device (--device) or in another precision (--precision)</source>
        <translation>%1 无法以 %3 运行 %2，而第 %4 层需要它；请在其他设备上训练（--device）或换用其他精度（--precision）</translation>
    </message>
</context>
<context>
    <name>backend.optimizer_unsupported</name>
    <message>
        <source>%1 cannot run %2 in %3, which the optimizer (%4) needs; train it on another device (--device), in another precision (--precision) or with another --optimizer</source>
        <translation>%1 无法以 %3 运行 %2，而优化器（%4）需要它；请在其他设备上训练（--device）、换用其他精度（--precision）或其他 --optimizer</translation>
    </message>
</context>
<context>
    <name>before.init_from_gone</name>
    <message>
        <source>%1 started from %2, which is no longer there as a weights file, a model folder or a run folder, so there is no &apos;before&apos; to compare with; put it back at that path</source>
        <translation>%1 从 %2 开始训练，但它已不再是权重文件、模型文件夹或运行文件夹，因此没有可比较的“之前”；请把它放回该路径</translation>
    </message>
</context>
<context>
    <name>before.no_weights</name>
    <message>
        <source>%1 holds no model.safetensors; pass the folder of a finished run (headroom train --out DIR)</source>
        <translation>%1 中没有 model.safetensors；请给出一次已完成运行的文件夹（headroom train --out DIR）</translation>
    </message>
</context>
<context>
    <name>before.none</name>
    <message>
        <source>%1 trained from freshly initialised weights and kept no step-0 checkpoint, so there is no &apos;before&apos; to compare with; compare a LoRA run or a run started with --init-from</source>
        <translation>%1 从新初始化的权重开始训练，且没有保留第 0 步检查点，因此没有可比较的“之前”；请比较 LoRA 运行或用 --init-from 开始的运行</translation>
    </message>
</context>
<context>
    <name>chat.unknown_template</name>
    <message>
        <source>unknown chat template &apos;%1&apos;; use auto (the tokenizer&apos;s family), plain, llama3, chatml or mistral (--chat-template)</source>
        <translation>未知的对话模板“%1”；请使用 auto（按分词器的模型家族）、plain、llama3、chatml 或 mistral（--chat-template）</translation>
    </message>
</context>
<context>
    <name>checkpoint.no_spec</name>
    <message>
        <source>%1 has no model_spec in its metadata and is not a GPT-2 checkpoint (no wte/wpe weights); weights written by Headroom, nanoGPT or Hugging Face GPT-2 can be read</source>
        <translation>%1 的元数据中没有 model_spec，也不是 GPT-2 检查点（没有 wte/wpe 权重）；只能读取 Headroom、nanoGPT 或 Hugging Face GPT-2 写出的权重</translation>
    </message>
</context>
<context>
    <name>checkpoint.not_gpt2</name>
    <message>
        <source>%1 looks like a GPT checkpoint but its blocks are not GPT-2&apos;s (h.K.ln_1, attn.c_attn, mlp.c_fc, width a multiple of 64)</source>
        <translation>%1 看起来是 GPT 检查点，但其块结构不是 GPT-2 的（h.K.ln_1、attn.c_attn、mlp.c_fc，宽度为 64 的倍数）</translation>
    </message>
</context>
<context>
    <name>cifar.bad_label</name>
    <message>
        <source>%1: record %2 has label %3, but CIFAR-10 labels are 0 to 9; the file is damaged or of another data set (CIFAR-100&apos;s binary records have two label bytes)</source>
        <translation>%1：第 %2 条记录的标签为 %3，但 CIFAR-10 的标签为 0 到 9；文件已损坏或属于其他数据集（CIFAR-100 的二进制记录有两个标签字节）</translation>
    </message>
</context>
<context>
    <name>cifar.dir_not_found</name>
    <message>
        <source>%1: folder not found; pass --data cifar10:DIR with the cifar-10-batches-bin folder of cifar-10-binary.tar.gz</source>
        <translation>%1：找不到文件夹；请用 --data cifar10:DIR 指定 cifar-10-binary.tar.gz 解压出的 cifar-10-batches-bin 文件夹</translation>
    </message>
</context>
<context>
    <name>cifar.empty</name>
    <message>
        <source>%1: the file is empty; a CIFAR-10 batch holds records of 3073 bytes (a label and a 32x32 colour image): unpack cifar-10-binary.tar.gz again</source>
        <translation>%1：文件为空；CIFAR-10 批文件由 3073 字节的记录组成（一个标签和一张 32x32 彩色图像）：请重新解压 cifar-10-binary.tar.gz</translation>
    </message>
</context>
<context>
    <name>cifar.meta_names</name>
    <message>
        <source>%1: names %2 classes, but CIFAR-10 has 10 (one name a line); unpack cifar-10-binary.tar.gz again or remove the file to use the published names</source>
        <translation>%1：列出了 %2 个类别，但 CIFAR-10 有 10 个（每行一个名称）；请重新解压 cifar-10-binary.tar.gz，或删除该文件以使用公开的类别名</translation>
    </message>
</context>
<context>
    <name>cifar.missing_files</name>
    <message>
        <source>%1: missing %2; a CIFAR-10 folder holds data_batch_1.bin to data_batch_5.bin and test_batch.bin (unpack cifar-10-binary.tar.gz)</source>
        <translation>%1：缺少 %2；CIFAR-10 文件夹应包含 data_batch_1.bin 到 data_batch_5.bin 以及 test_batch.bin（解压 cifar-10-binary.tar.gz）</translation>
    </message>
</context>
<context>
    <name>cifar.partial_record</name>
    <message>
        <source>%1: %2 bytes is not a whole number of 3073-byte records (a label and a 32x32 colour image); the file is truncated or not a CIFAR-10 binary batch (the Python version of CIFAR-10 is another format): unpack cifar-10-binary.tar.gz again</source>
        <translation>%1：%2 字节不是 3073 字节记录（一个标签和一张 32x32 彩色图像）的整数倍；文件被截断或不是 CIFAR-10 二进制批文件（CIFAR-10 的 Python 版本是另一种格式）：请重新解压 cifar-10-binary.tar.gz</translation>
    </message>
</context>
<context>
    <name>cifar.too_large</name>
    <message>
        <source>%1: %2 records is more than the %3 a batch file may hold; it is not a CIFAR-10 batch file</source>
        <translation>%1：%2 条记录超过批文件最多可容纳的 %3 条；这不是 CIFAR-10 批文件</translation>
    </message>
</context>
<context>
    <name>compress.bits</name>
    <message>
        <source>--quantize: %1-bit weights are not offered; use int8, int4 or nf4</source>
        <translation>--quantize：不提供 %1 位权重；请使用 int8、int4 或 nf4</translation>
    </message>
</context>
<context>
    <name>compress.group</name>
    <message>
        <source>a quantisation group of %1 values: use 1 to 1048576</source>
        <translation>量化分组为 %1 个值：请使用 1 到 1048576</translation>
    </message>
</context>
<context>
    <name>compress.prune</name>
    <message>
        <source>--prune %1: give the fraction of each weight tensor to set to zero, from 0 up to (not including) 1, e.g. 0.5</source>
        <translation>--prune %1：请给出每个权重张量中置零的比例，从 0 到 1（不含 1），例如 0.5</translation>
    </message>
</context>
<context>
    <name>compress.quantize</name>
    <message>
        <source>--quantize %1: use int8 (a scale per output row), int4 (a scale per 64 values) or nf4 (QLoRA&apos;s 4-bit NormalFloat, its scales quantised too)</source>
        <translation>--quantize %1：请使用 int8（每个输出行一个缩放系数）、int4（每 64 个值一个缩放系数）或 nf4（QLoRA 的 4 位 NormalFloat，缩放系数本身也量化）</translation>
    </message>
</context>
<context>
    <name>config.device</name>
    <message>
        <source>unknown device &apos;%1&apos;; use auto, cpu or cuda:N (--device)</source>
        <translation>未知设备“%1”；请使用 auto、cpu 或 cuda:N（--device）</translation>
    </message>
</context>
<context>
    <name>config.eps</name>
    <message>
        <source>Adam eps must be a positive number, got %1 (--eps)</source>
        <translation>Adam 的 eps 必须是正数，得到的是 %1（--eps）</translation>
    </message>
</context>
<context>
    <name>config.field_integer_range</name>
    <message>
        <source>run configuration: field &apos;%1&apos; must be an integer from %2 to %3, got %4</source>
        <translation>运行配置：字段“%1”必须是 %2 到 %3 之间的整数，得到的是 %4</translation>
    </message>
</context>
<context>
    <name>config.field_not_bool</name>
    <message>
        <source>run configuration: field &apos;%1&apos; must be true or false, got %2</source>
        <translation>运行配置：字段“%1”必须是 true 或 false，得到的是 %2</translation>
    </message>
</context>
<context>
    <name>config.field_not_finite</name>
    <message>
        <source>run configuration: field &apos;%1&apos; must be a finite number, got %2</source>
        <translation>运行配置：字段“%1”必须是有限的数值，得到的是 %2</translation>
    </message>
</context>
<context>
    <name>config.field_not_integer</name>
    <message>
        <source>run configuration: field &apos;%1&apos; must be an integer, got %2</source>
        <translation>运行配置：字段“%1”必须是整数，得到的是 %2</translation>
    </message>
</context>
<context>
    <name>config.field_not_list</name>
    <message>
        <source>run configuration: field &apos;%1&apos; must be a list of integers, got %2</source>
        <translation>运行配置：字段“%1”必须是整数列表，得到的是 %2</translation>
    </message>
</context>
<context>
    <name>config.field_not_number</name>
    <message>
        <source>run configuration: field &apos;%1&apos; must be a number, got %2</source>
        <translation>运行配置：字段“%1”必须是数值，得到的是 %2</translation>
    </message>
</context>
<context>
    <name>config.field_not_object</name>
    <message>
        <source>run configuration: field &apos;%1&apos; must be an object, got %2</source>
        <translation>运行配置：字段“%1”必须是对象，得到的是 %2</translation>
    </message>
</context>
<context>
    <name>config.field_not_string</name>
    <message>
        <source>run configuration: field &apos;%1&apos; must be a string, got %2</source>
        <translation>运行配置：字段“%1”必须是字符串，得到的是 %2</translation>
    </message>
</context>
<context>
    <name>config.lr</name>
    <message>
        <source>learning rate must be a positive number, got %1 (--lr)</source>
        <translation>学习率必须是正数，得到的是 %1（--lr）</translation>
    </message>
</context>
<context>
    <name>config.not_object</name>
    <message>
        <source>run configuration: must be a JSON object, got %1</source>
        <translation>运行配置：必须是 JSON 对象，得到的是 %1</translation>
    </message>
</context>
<context>
    <name>config.pipeline_split_count</name>
    <message>
        <source>--pipeline-split lists %1 stages; at most 4096</source>
        <translation>--pipeline-split 列出了 %1 个阶段；最多 4096 个</translation>
    </message>
</context>
<context>
    <name>config.precision</name>
    <message>
        <source>unknown precision &apos;%1&apos;; use fp32, tf32, bf16 or fp16 (--precision)</source>
        <translation>未知精度“%1”；请使用 fp32、tf32、bf16 或 fp16（--precision）</translation>
    </message>
</context>
<context>
    <name>config.range</name>
    <message>
        <source>%1 must be between %2 and %3, got %4 (%5)</source>
        <translation>%1 必须在 %2 到 %3 之间，得到的是 %4（%5）</translation>
    </message>
</context>
<context>
    <name>config.rank_batch_count</name>
    <message>
        <source>--rank-batch lists %1 ranks; at most 4096</source>
        <translation>--rank-batch 列出了 %1 个 rank；最多 4096 个</translation>
    </message>
</context>
<context>
    <name>config.real_range</name>
    <message>
        <source>%1 must be a number in [%2, %3%4, got %5 (%6)</source>
        <translation>%1 必须是 [%2, %3%4 内的数，得到的是 %5（%6）</translation>
    </message>
</context>
<context>
    <name>config.save_every_seconds</name>
    <message>
        <source>the checkpoint interval must be a positive number of seconds, got %1; set it with --save-every 10m (minutes) or --save-every N (steps)</source>
        <translation>检查点间隔必须是正的秒数，得到的是 %1；请用 --save-every 10m（分钟）或 --save-every N（步）设置</translation>
    </message>
</context>
<context>
    <name>config.shard</name>
    <message>
        <source>unknown sharding stage &apos;%1&apos;; use none, dp, zero1, zero2 or zero3 (--shard)</source>
        <translation>未知的分片阶段“%1”；请使用 none、dp、zero1、zero2 或 zero3（--shard）</translation>
    </message>
</context>
<context>
    <name>config.target_not_table</name>
    <message>
        <source>--target names a table&apos;s class column, but the data is &apos;%1&apos;; use it with --data csv:FILE or tsv:FILE, or leave it out</source>
        <translation>--target 指定表格的类别列，但数据是“%1”；请与 --data csv:FILE 或 tsv:FILE 一起使用，或去掉它</translation>
    </message>
</context>
<context>
    <name>cuda.driver_too_old</name>
    <message>
        <source>the NVIDIA driver supports CUDA %1, but this Headroom was built with CUDA %2, which needs driver %3 or newer; update the driver, use a Headroom built with CUDA %1, or use --device cpu</source>
        <translation>NVIDIA 驱动支持 CUDA %1，但此 Headroom 使用 CUDA %2 构建，需要 %3 或更新的驱动；请更新驱动、使用以 CUDA %1 构建的 Headroom，或使用 --device cpu</translation>
    </message>
</context>
<context>
    <name>cuda.no_arch</name>
    <message>
        <source>%1 has compute capability %2.%3, but this Headroom holds GPU code only for %4; build it with -DHEADROOM_CUDA_ARCHS=%2%3 (or a list that includes it), or use --device cpu</source>
        <translation>%1 的计算能力为 %2.%3，但此 Headroom 只包含 %4 的 GPU 代码；请用 -DHEADROOM_CUDA_ARCHS=%2%3（或包含它的列表）构建，或使用 --device cpu</translation>
    </message>
</context>
<context>
    <name>cuda.transformer_op_missing</name>
    <message>
        <source>%1 is not implemented on the GPU yet; train transformer models with --device cpu for now</source>
        <translation>GPU 上尚未实现 %1；目前请用 --device cpu 训练 Transformer 模型</translation>
    </message>
</context>
<context>
    <name>data.cifar10</name>
    <message>
        <source>CIFAR-10: 50000/10000 colour 32x32 images of 10 classes (binary version, cifar-10-batches-bin)</source>
        <translation>CIFAR-10：50000/10000 张 32x32 彩色图像，10 个类别（二进制版本，cifar-10-batches-bin）</translation>
    </message>
</context>
<context>
    <name>data.cifar10_dir</name>
    <message>
        <source>CIFAR-10 from a folder: data_batch_1.bin to data_batch_5.bin and test_batch.bin</source>
        <translation>来自文件夹的 CIFAR-10：data_batch_1.bin 到 data_batch_5.bin 以及 test_batch.bin</translation>
    </message>
</context>
<context>
    <name>data.cifar_no_folder</name>
    <message>
        <source>cifar10: needs a folder, e.g. --data cifar10:/path/to/cifar-10-batches-bin</source>
        <translation>cifar10: 需要一个文件夹，例如 --data cifar10:/path/to/cifar-10-batches-bin</translation>
    </message>
</context>
<context>
    <name>data.cifar_not_found</name>
    <message>
        <source>dataset &apos;cifar10&apos; not found; searched %1. To use it, download cifar-10-binary.tar.gz (https://www.cs.toronto.edu/~kriz/cifar.html) and unpack it into $HEADROOM_DATA_DIR (it makes cifar-10-batches-bin/), or pass --data cifar10:DIR with the unpacked folder</source>
        <translation>找不到数据集“cifar10”；已搜索 %1。要使用它，请下载 cifar-10-binary.tar.gz（https://www.cs.toronto.edu/~kriz/cifar.html）并解压到 $HEADROOM_DATA_DIR（会生成 cifar-10-batches-bin/），或用 --data cifar10:DIR 指定解压出的文件夹</translation>
    </message>
</context>
<context>
    <name>data.csv</name>
    <message>
        <source>A CSV table: a header row, numeric columns and a class column named by --target; a fifth of the rows is the test set</source>
        <translation>CSV 表格：一行表头、若干数值列和一个由 --target 指定的类别列；五分之一的行作为测试集</translation>
    </message>
</context>
<context>
    <name>data.empty_split</name>
    <message>
        <source>%1 holds no images (its header says 0), so the %2 split is empty; the file is damaged or truncated, download it again</source>
        <translation>%1 中没有图像（其文件头写的是 0），因此 %2 划分为空；文件已损坏或被截断，请重新下载</translation>
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
    <name>data.idx_dir_not_found</name>
    <message>
        <source>idx:%1: folder not found; pass --data idx:DIR with a folder holding train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte (raw or .gz)</source>
        <translation>idx:%1：找不到文件夹；请传入 --data idx:DIR，DIR 为包含 train-images-idx3-ubyte、train-labels-idx1-ubyte、t10k-images-idx3-ubyte 和 t10k-labels-idx1-ubyte（原始或 .gz）的文件夹</translation>
    </message>
</context>
<context>
    <name>data.idx_missing_files</name>
    <message>
        <source>%1: missing %2; an IDX dataset folder needs all four files (raw or .gz)</source>
        <translation>%1：缺少 %2；IDX 数据集文件夹需要全部四个文件（原始或 .gz）</translation>
    </message>
</context>
<context>
    <name>data.idx_no_folder</name>
    <message>
        <source>idx: needs a folder, e.g. --data idx:/path/to/mnist</source>
        <translation>idx: 需要一个文件夹，例如 --data idx:/path/to/mnist</translation>
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
    <name>data.negative_limit</name>
    <message>
        <source>sample limits must be &gt;= 0 (0 = all)</source>
        <translation>样本数上限必须 &gt;= 0（0 = 全部）</translation>
    </message>
</context>
<context>
    <name>data.no_memory</name>
    <message>
        <source>not enough memory to load dataset &apos;%1&apos;; close other programs or use a machine with more memory</source>
        <translation>内存不足，无法加载数据集“%1”；请关闭其他程序或使用内存更大的机器</translation>
    </message>
</context>
<context>
    <name>data.no_normalisation</name>
    <message>
        <source>no published normalisation for &apos;%1&apos;; compute it from the data</source>
        <translation>“%1”没有公开的归一化参数；请从数据中计算</translation>
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
    <name>data.probe_cifar</name>
    <message>
        <source>%1 train / %2 test colour images of 32x32</source>
        <translation>%1 张训练 / %2 张测试 32x32 彩色图像</translation>
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
    <name>data.probe_table</name>
    <message>
        <source>%1 rows (%2 train / %3 test), %4 numeric columns, %5 classes in &apos;%6&apos;</source>
        <translation>%1 行（%2 训练 / %3 测试），%4 个数值列，“%6”中有 %5 个类别</translation>
    </message>
</context>
<context>
    <name>data.split_shapes</name>
    <message>
        <source>%1: training images are %2 but test images are %3; both splits must come from the same dataset</source>
        <translation>%1：训练图像为 %2，而测试图像为 %3；两个划分必须来自同一个数据集</translation>
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
    <name>data.synthetic_size</name>
    <message>
        <source>synthetic dataset size must be between 1 and %1, got %2</source>
        <translation>合成数据集的大小必须在 1 到 %1 之间，得到的是 %2</translation>
    </message>
</context>
<context>
    <name>data.tsv</name>
    <message>
        <source>A TSV table (tab-separated), as csv:FILE</source>
        <translation>TSV 表格（制表符分隔），同 csv:FILE</translation>
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
    <name>datafile.cannot_open</name>
    <message>
        <source>%1: cannot open (%2); check the file&apos;s permissions</source>
        <translation>%1：无法打开（%2）；请检查文件权限</translation>
    </message>
</context>
<context>
    <name>datafile.cannot_stat</name>
    <message>
        <source>%1: cannot read its size (%2)</source>
        <translation>%1：无法读取其大小（%2）</translation>
    </message>
</context>
<context>
    <name>datafile.is_directory</name>
    <message>
        <source>%1: is a folder, expected %2</source>
        <translation>%1：是一个文件夹，应为%2</translation>
    </message>
</context>
<context>
    <name>datafile.no_memory</name>
    <message>
        <source>%1: not enough memory to read its %2; close other programs</source>
        <translation>%1：内存不足，无法读取其 %2；请关闭其他程序</translation>
    </message>
</context>
<context>
    <name>datafile.not_found</name>
    <message>
        <source>%1: file not found; check the path (expected %2)</source>
        <translation>%1：找不到文件；请检查路径（应为%2）</translation>
    </message>
</context>
<context>
    <name>datafile.not_regular</name>
    <message>
        <source>%1: is not a regular file (a device, pipe or socket); point to %2 itself</source>
        <translation>%1：不是普通文件（是设备、管道或套接字）；请指向%2本身</translation>
    </message>
</context>
<context>
    <name>datafile.short_read</name>
    <message>
        <source>%1: could read only %2 of its %3 bytes; the file changed while it was read or the disk has an error</source>
        <translation>%1：只读到 %3 字节中的 %2 字节；文件在读取时被改动，或磁盘有错误</translation>
    </message>
</context>
<context>
    <name>datafile.too_large</name>
    <message>
        <source>%1: %2 is larger than the %3 Headroom reads as %4; use a smaller file or a part of it</source>
        <translation>%1：%2 超过 Headroom 作为%4读取的上限 %3；请使用更小的文件或其中一部分</translation>
    </message>
</context>
<context>
    <name>device.auto_gpu</name>
    <message>
        <source>device auto: %1 passed the self-test (%2); training on the GPU</source>
        <translation>device auto：%1 通过了自检（%2）；在 GPU 上训练</translation>
    </message>
</context>
<context>
    <name>device.auto_gpu_failed</name>
    <message>
        <source>device auto: %1 failed the self-test (%2); training on the CPU</source>
        <translation>device auto：%1 未通过自检（%2）；在 CPU 上训练</translation>
    </message>
</context>
<context>
    <name>device.auto_no_gpu</name>
    <message>
        <source>device auto: no GPU (%1); training on the CPU</source>
        <translation>device auto：没有 GPU（%1）；在 CPU 上训练</translation>
    </message>
</context>
<context>
    <name>device.auto_no_nvidia</name>
    <message>
        <source>device auto: this machine has no NVIDIA GPU driver; training on the CPU</source>
        <translation>device auto：这台机器没有 NVIDIA GPU 驱动；在 CPU 上训练</translation>
    </message>
</context>
<context>
    <name>device.cuda_module</name>
    <message>
        <source>cuda     module %1</source>
        <translation>cuda     模块 %1</translation>
    </message>
</context>
<context>
    <name>device.cuda_unavailable</name>
    <message>
        <source>cuda     not available (%1): %2</source>
        <translation>cuda     不可用（%1）：%2</translation>
    </message>
</context>
<context>
    <name>device.source_absent</name>
    <message>
        <source>defaults of an %1 from the table (%2 does not exist here); plan with --device h100|h200|a100|... to choose another</source>
        <translation>来自表格的 %1 默认值（此处不存在 %2）；用 --device h100|h200|a100|... 选择其他设备进行规划</translation>
    </message>
</context>
<context>
    <name>device.source_here</name>
    <message>
        <source>this machine</source>
        <translation>本机</translation>
    </message>
</context>
<context>
    <name>device.source_here_gpu</name>
    <message>
        <source>this machine (%1)</source>
        <translation>本机（%1）</translation>
    </message>
</context>
<context>
    <name>device.source_no_cuda</name>
    <message>
        <source>defaults of an %1 from the table (%2); plan with --device h100|h200|a100|... to choose another</source>
        <translation>来自表格的 %1 默认值（%2）；用 --device h100|h200|a100|... 选择其他设备进行规划</translation>
    </message>
</context>
<context>
    <name>device.source_table</name>
    <message>
        <source>defaults of an %1 from the table (not measured)</source>
        <translation>来自表格的 %1 默认值（未实测）</translation>
    </message>
</context>
<context>
    <name>dist.bootstrap</name>
    <message>
        <source>rank %1: the start-up broadcast from rank %2 failed: %3</source>
        <translation>rank %1：来自 rank %2 的启动广播失败：%3</translation>
    </message>
</context>
<context>
    <name>dist.broken</name>
    <message>
        <source>rank %1: communication with the other ranks already failed (see the first error); the run cannot continue</source>
        <translation>rank %1：与其他 rank 的通信已经失败（见第一条错误）；运行无法继续</translation>
    </message>
</context>
<context>
    <name>dist.env_mismatch</name>
    <message>
        <source>MPI says rank %1 of %2 but mpirun&apos;s environment says rank %3 of %4; start the ranks with one mpirun</source>
        <translation>MPI 报告本进程为 rank %1（共 %2 个），但 mpirun 的环境变量报告为 rank %3（共 %4 个）；请用同一个 mpirun 启动所有 rank</translation>
    </message>
</context>
<context>
    <name>dist.mpi_failed</name>
    <message>
        <source>rank %1: %2 failed: %3</source>
        <translation>rank %1：%2 失败：%3</translation>
    </message>
</context>
<context>
    <name>dist.mpi_init</name>
    <message>
        <source>MPI could not start (%1); see mpirun&apos;s messages above</source>
        <translation>MPI 无法启动（%1）；请查看上方 mpirun 的消息</translation>
    </message>
</context>
<context>
    <name>dist.mpi_threads</name>
    <message>
        <source>this Open MPI gives thread level %1, Headroom needs MPI_THREAD_SERIALIZED (2); use an Open MPI built with thread support</source>
        <translation>此 Open MPI 提供的线程级别为 %1，Headroom 需要 MPI_THREAD_SERIALIZED (2)；请使用启用了线程支持的 Open MPI</translation>
    </message>
</context>
<context>
    <name>dist.nccl_cpu</name>
    <message>
        <source>NCCL ranks need a CUDA device, got %1; use MPI for CPU ranks</source>
        <translation>NCCL rank 需要 CUDA 设备，得到的是 %1；CPU rank 请使用 MPI</translation>
    </message>
</context>
<context>
    <name>dist.nccl_failed</name>
    <message>
        <source>rank %1: %2 failed on %3: %4</source>
        <translation>rank %1：%2 在 %3 上失败：%4</translation>
    </message>
</context>
<context>
    <name>dist.nccl_no_split</name>
    <message>
        <source>NCCL %1 cannot form groups of ranks (ncclCommSplit came with NCCL 2.18); pipeline stages with data-parallel replicas, or a GPT&apos;s tied head across stages, need them: install NCCL 2.18 or newer</source>
        <translation>NCCL %1 无法组成进程组（ncclCommSplit 自 NCCL 2.18 起才有）；带数据并行副本的流水线阶段，或跨阶段的 GPT 绑定输出头，都需要进程组：请安装 NCCL 2.18 或更新版本</translation>
    </message>
</context>
<context>
    <name>dist.no_libmpi</name>
    <message>
        <source>cannot load Open MPI (%1); install Open MPI (Debian: openmpi-bin libopenmpi3) or train on one process</source>
        <translation>无法加载 Open MPI（%1）；请安装 Open MPI（Debian：openmpi-bin libopenmpi3），或在单个进程中训练</translation>
    </message>
</context>
<context>
    <name>dist.no_libnccl</name>
    <message>
        <source>cannot load NCCL (%1); GPU ranks need it: install NCCL 2.14 or newer (it comes with the CUDA toolkit or as libnccl2), or use CPU ranks</source>
        <translation>无法加载 NCCL（%1）；GPU rank 需要它：请安装 NCCL 2.14 或更新版本（随 CUDA 工具包提供，或安装 libnccl2），或使用 CPU rank</translation>
    </message>
</context>
<context>
    <name>dist.no_mpi_build</name>
    <message>
        <source>this build of Headroom has no MPI support (Open MPI&apos;s headers were not found when it was built); install libopenmpi-dev and rebuild, or train on one process</source>
        <translation>此 Headroom 构建不支持 MPI（构建时未找到 Open MPI 的头文件）；请安装 libopenmpi-dev 后重新构建，或在单个进程中训练</translation>
    </message>
</context>
<context>
    <name>dist.no_nccl_build</name>
    <message>
        <source>this build of Headroom has no NCCL support (it was built without CUDA or without nccl.h); GPU ranks need it: rebuild with the CUDA toolkit and NCCL, or use CPU ranks</source>
        <translation>此 Headroom 构建不支持 NCCL（构建时没有 CUDA 或没有 nccl.h）；GPU rank 需要它：请用 CUDA 工具包和 NCCL 重新构建，或使用 CPU rank</translation>
    </message>
</context>
<context>
    <name>dist.no_split</name>
    <message>
        <source>%1 cannot form groups of ranks (pipeline stages with data-parallel replicas); use CPU ranks, or as many stages as ranks</source>
        <translation>%1 无法组成 rank 分组（带数据并行副本的流水线阶段）；请使用 CPU rank，或让阶段数等于 rank 数</translation>
    </message>
</context>
<context>
    <name>dist.not_launched</name>
    <message>
        <source>CPU ranks talk through MPI, and this process was not started by mpirun; launch the ranks with mpirun -np N headroom ... (or train on one process)</source>
        <translation>CPU rank 通过 MPI 通信，而此进程不是由 mpirun 启动的；请用 mpirun -np N headroom ... 启动各 rank（或在单个进程中训练）</translation>
    </message>
</context>
<context>
    <name>dist.not_openmpi</name>
    <message>
        <source>the MPI library found is not Open MPI 4 or newer (it lacks %1); Headroom&apos;s CPU ranks need Open MPI (Debian: openmpi-bin libopenmpi3)</source>
        <translation>找到的 MPI 库不是 Open MPI 4 或更新版本（缺少 %1）；Headroom 的 CPU rank 需要 Open MPI（Debian：openmpi-bin libopenmpi3）</translation>
    </message>
</context>
<context>
    <name>dist.old_nccl</name>
    <message>
        <source>the NCCL found (version code %1) is older than 2.14, which non-blocking communicators need (%2); install a newer NCCL</source>
        <translation>找到的 NCCL（版本号 %1）早于 2.14，而非阻塞通信器需要 2.14（%2）；请安装更新的 NCCL</translation>
    </message>
</context>
<context>
    <name>dist.timeout</name>
    <message>
        <source>rank %1: %2 did not finish within %3 s: another rank stopped, is stuck or took a different path (its messages say which); --rank-timeout sets the limit</source>
        <translation>rank %1：%2 未在 %3 秒内完成：另一个 rank 已停止、卡住或走了不同的路径（其消息会说明是哪种）；--rank-timeout 设置该时限</translation>
    </message>
</context>
<context>
    <name>eval.classes</name>
    <message>
        <source>the model has %1 classes but &apos;%2&apos; has %3; pick the model the weights were trained for</source>
        <translation>模型有 %1 个类别，但“%2”有 %3 个；请选择这些权重训练时所用的模型</translation>
    </message>
</context>
<context>
    <name>eval.no_test</name>
    <message>
        <source>dataset &apos;%1&apos; has no test samples to evaluate on</source>
        <translation>数据集“%1”没有可供评估的测试样本</translation>
    </message>
</context>
<context>
    <name>eval.shape</name>
    <message>
        <source>the model expects samples of shape %1 but &apos;%2&apos; has %3; pick the model the weights were trained for (--preset or --model)</source>
        <translation>模型需要形状为 %1 的样本，但“%2”的样本形状为 %3；请选择这些权重训练时所用的模型（--preset 或 --model）</translation>
    </message>
</context>
<context>
    <name>eval.tokenizer_built</name>
    <message>
        <source>%1 names no tokenizer: the %2 tokenizer was built from %3 as a run builds it</source>
        <translation>%1 未指明分词器：已按运行的方式从 %3 构建了 %2 分词器</translation>
    </message>
</context>
<context>
    <name>eval.vocab</name>
    <message>
        <source>the %1 tokenizer has %2 tokens but model &apos;%3&apos; has a vocabulary of %4; pick the model the weights were trained for</source>
        <translation>%1 分词器有 %2 个词元，但模型“%3”的词表大小为 %4；请选择训练这些权重时所用的模型</translation>
    </message>
</context>
<context>
    <name>event.field_text</name>
    <message>
        <source>run event: &quot;%1&quot; must be a string</source>
        <translation>运行事件：“%1”必须是字符串</translation>
    </message>
</context>
<context>
    <name>event.field_type</name>
    <message>
        <source>run event: &quot;%1&quot; must be a number</source>
        <translation>运行事件：“%1”必须是数字</translation>
    </message>
</context>
<context>
    <name>event.no_kind</name>
    <message>
        <source>run event: expected an object with an &quot;event&quot; name</source>
        <translation>运行事件：应为带有 &quot;event&quot; 名称的对象</translation>
    </message>
</context>
<context>
    <name>event.unknown_kind</name>
    <message>
        <source>run event: unknown event &quot;%1&quot;</source>
        <translation>运行事件：未知事件“%1”</translation>
    </message>
</context>
<context>
    <name>generate.as_exported</name>
    <message>
        <source>%1 is not a LLaMA-family model, which GGUF export does not write; --as-exported is for the weights of a model headroom export --gguf can write</source>
        <translation>%1 不是 LLaMA 系列模型，GGUF 导出不会写出它；--as-exported 只用于 headroom export --gguf 能写出的模型的权重</translation>
    </message>
</context>
<context>
    <name>generate.no_weights</name>
    <message>
        <source>%1 holds no model.safetensors; pass the folder of a finished run (headroom train --out DIR) or --weights FILE</source>
        <translation>%1 中没有 model.safetensors；请传入一个已完成运行的文件夹（headroom train --out DIR）或 --weights FILE</translation>
    </message>
</context>
<context>
    <name>generate.not_lm</name>
    <message>
        <source>%1 holds model &apos;%2&apos;, which is not a language model (it does not start with a token_embedding); only language models generate text</source>
        <translation>%1 中的模型“%2”不是语言模型（它不以 token_embedding 开头）；只有语言模型能生成文本</translation>
    </message>
</context>
<context>
    <name>generate.temperature</name>
    <message>
        <source>the temperature must be 0 (greedy) or positive (--temperature)</source>
        <translation>温度必须为 0（贪心）或正数（--temperature）</translation>
    </message>
</context>
<context>
    <name>generate.tokens</name>
    <message>
        <source>the number of tokens to generate must be 0 to 1000000 (--tokens)</source>
        <translation>要生成的 token 数必须在 0 到 1000000 之间（--tokens）</translation>
    </message>
</context>
<context>
    <name>generate.top_k</name>
    <message>
        <source>top-k must be 0 (all tokens) or positive (--top-k)</source>
        <translation>top-k 必须为 0（全部 token）或正数（--top-k）</translation>
    </message>
</context>
<context>
    <name>generate.vocab</name>
    <message>
        <source>the %1 tokenizer has %2 tokens but the model only %3; the tokenizer file does not belong to these weights</source>
        <translation>%1 分词器有 %2 个 token，而模型只有 %3 个；该分词器文件与这些权重不匹配</translation>
    </message>
</context>
<context>
    <name>gguf.dtype</name>
    <message>
        <source>%1: the tensor &apos;%2&apos; is stored as %3, not a float type</source>
        <translation>%1：张量“%2”以 %3 存储，不是浮点类型</translation>
    </message>
</context>
<context>
    <name>gguf.extra</name>
    <message>
        <source>GGUF writer: more values than the layout&apos;s tensors hold</source>
        <translation>GGUF 写入器：给出的数值多于布局中张量能容纳的数量</translation>
    </message>
</context>
<context>
    <name>gguf.incomplete</name>
    <message>
        <source>GGUF writer: tensor &apos;%1&apos; was not written whole</source>
        <translation>GGUF 写入器：张量“%1”没有完整写入</translation>
    </message>
</context>
<context>
    <name>gguf.json</name>
    <message>
        <source>%1 is not JSON (%2); repair or remove it and export again</source>
        <translation>%1 不是 JSON（%2）；请修复或删除它后重新导出</translation>
    </message>
</context>
<context>
    <name>gguf.key</name>
    <message>
        <source>GGUF metadata key &apos;%1&apos; is empty or given twice</source>
        <translation>GGUF 元数据键“%1”为空或重复</translation>
    </message>
</context>
<context>
    <name>gguf.layout</name>
    <message>
        <source>%1: the model &apos;%2&apos; is not in the LLaMA layout (token_embedding, llama_block..., rmsnorm, lm_head), the one llama.cpp&apos;s llama and qwen2 architectures read; a GPT with learned positions or a custom spec has no GGUF form here. Export a LLaMA-family run</source>
        <translation>%1：模型“%2”不是 LLaMA 布局（token_embedding、llama_block...、rmsnorm、lm_head），而 llama.cpp 的 llama 和 qwen2 架构只读这种布局；带可学习位置编码的 GPT 或自定义规格在这里没有 GGUF 形式。请导出 LLaMA 系列的运行</translation>
    </message>
</context>
<context>
    <name>gguf.missing</name>
    <message>
        <source>%1: the tensor llama.cpp reads as &apos;%2&apos; is missing; export the model.safetensors a run wrote</source>
        <translation>%1：缺少 llama.cpp 读作“%2”的张量；请导出某次运行写出的 model.safetensors</translation>
    </message>
</context>
<context>
    <name>gguf.name</name>
    <message>
        <source>GGUF tensor name &apos;%1&apos; is empty or given twice</source>
        <translation>GGUF 张量名“%1”为空或重复</translation>
    </message>
</context>
<context>
    <name>gguf.q8_row</name>
    <message>
        <source>q8_0 rounding of %1 values: not whole blocks of 32</source>
        <translation>对 %1 个值做 q8_0 舍入：不是 32 个值的整块</translation>
    </message>
</context>
<context>
    <name>gguf.rope</name>
    <message>
        <source>%1: Llama 3 rope scaling on a qwen2 model has no GGUF form; export a model without rope_scaling</source>
        <translation>%1：qwen2 模型上的 Llama 3 RoPE 缩放没有 GGUF 形式；请导出不带 rope_scaling 的模型</translation>
    </message>
</context>
<context>
    <name>gguf.rows</name>
    <message>
        <source>GGUF writer: %1 values do not make whole rows of tensor &apos;%2&apos;</source>
        <translation>GGUF 写入器：%1 个数值不能构成张量“%2”的整行</translation>
    </message>
</context>
<context>
    <name>gguf.shape</name>
    <message>
        <source>GGUF tensor &apos;%1&apos; has a shape its type cannot hold</source>
        <translation>GGUF 张量“%1”的形状无法用其类型存储</translation>
    </message>
</context>
<context>
    <name>gguf.shape_of</name>
    <message>
        <source>%1: the tensor &apos;%2&apos; does not have the shape the model&apos;s configuration gives it; the file is damaged</source>
        <translation>%1：张量“%2”的形状与模型配置给出的不符；文件已损坏</translation>
    </message>
</context>
<context>
    <name>gguf.spm</name>
    <message>
        <source>%1: the SentencePiece model cannot go into the GGUF file: %2</source>
        <translation>%1：该 SentencePiece 模型无法写入 GGUF 文件：%2</translation>
    </message>
</context>
<context>
    <name>gguf.tensor</name>
    <message>
        <source>%1: the tensor &apos;%2&apos; has no place in llama.cpp&apos;s %3 architecture; export a model in the plain LLaMA layout</source>
        <translation>%1：张量“%2”在 llama.cpp 的 %3 架构中没有位置；请导出标准 LLaMA 布局的模型</translation>
    </message>
</context>
<context>
    <name>gguf.tokenizer</name>
    <message>
        <source>%1: the run&apos;s tokenizer (%2) cannot go into the GGUF file: %3. GGUF export takes the byte tokenizer, a Hugging Face byte-level BPE tokenizer.json (GPT-2, Llama 3, Qwen2) or a SentencePiece BPE model (tokenizer.model, bpe:N); train with one of them</source>
        <translation>%1：该运行的分词器（%2）无法写入 GGUF 文件：%3。GGUF 导出支持字节分词器、Hugging Face 字节级 BPE tokenizer.json（GPT-2、Llama 3、Qwen2）或 SentencePiece BPE 模型（tokenizer.model、bpe:N）；请用其中之一训练</translation>
    </message>
</context>
<context>
    <name>gguf.type</name>
    <message>
        <source>unknown GGUF type &apos;%1&apos;; pick f32, f16, bf16 or q8_0</source>
        <translation>未知的 GGUF 类型“%1”；请选择 f32、f16、bf16 或 q8_0</translation>
    </message>
</context>
<context>
    <name>hf_config.architecture</name>
    <message>
        <source>%1: &apos;%2&apos; is not an architecture Headroom builds; it reads LlamaForCausalLM, MistralForCausalLM and Qwen2ForCausalLM (model_type llama, mistral, qwen2)</source>
        <translation>%1：“%2”不是 Headroom 能构建的架构；支持 LlamaForCausalLM、MistralForCausalLM 和 Qwen2ForCausalLM（model_type 为 llama、mistral、qwen2）</translation>
    </message>
</context>
<context>
    <name>hf_config.architectures</name>
    <message>
        <source>%1: &quot;architectures&quot; must be a list of names such as [&quot;LlamaForCausalLM&quot;], got %2</source>
        <translation>%1：&quot;architectures&quot; 必须是名称列表，例如 [&quot;LlamaForCausalLM&quot;]，实际为 %2</translation>
    </message>
</context>
<context>
    <name>hf_config.attention_bias</name>
    <message>
        <source>%1: &quot;attention_bias&quot;: true (biases on q, k, v and o projections) is not supported; Headroom&apos;s LLaMA block has biases on q, k and v only (Qwen2)</source>
        <translation>%1：不支持 &quot;attention_bias&quot;: true（q、k、v 和 o 投影都带偏置）；Headroom 的 LLaMA 块只在 q、k、v 上有偏置（Qwen2）</translation>
    </message>
</context>
<context>
    <name>hf_config.bool</name>
    <message>
        <source>%1: &quot;%2&quot; must be true or false, got %3</source>
        <translation>%1：&quot;%2&quot; 必须为 true 或 false，实际为 %3</translation>
    </message>
</context>
<context>
    <name>hf_config.head_dim</name>
    <message>
        <source>%1: the head size %2 must be even and at most %3 (rotary embeddings pair a head&apos;s dimensions); correct hidden_size, num_attention_heads or head_dim</source>
        <translation>%1：头大小 %2 必须为偶数且不超过 %3（旋转位置编码把一个头的维度两两配对）；请修改 hidden_size、num_attention_heads 或 head_dim</translation>
    </message>
</context>
<context>
    <name>hf_config.head_split</name>
    <message>
        <source>%1: hidden_size %2 is not a multiple of num_attention_heads %3 and no head_dim is given; give &quot;head_dim&quot; or correct the sizes</source>
        <translation>%1：hidden_size %2 不是 num_attention_heads %3 的倍数，且未给出 head_dim；请给出 &quot;head_dim&quot; 或修正尺寸</translation>
    </message>
</context>
<context>
    <name>hf_config.hidden_act</name>
    <message>
        <source>%1: &quot;hidden_act&quot; &apos;%2&apos; is not supported; the LLaMA block&apos;s MLP is SwiGLU (&quot;silu&quot;)</source>
        <translation>%1：不支持 &quot;hidden_act&quot; “%2”；LLaMA 块的 MLP 是 SwiGLU（&quot;silu&quot;）</translation>
    </message>
</context>
<context>
    <name>hf_config.int_range</name>
    <message>
        <source>%1: &quot;%2&quot; must be an integer from %3 to %4, got %5; correct it or use the model&apos;s own config.json</source>
        <translation>%1：&quot;%2&quot; 必须是 %3 到 %4 之间的整数，实际为 %5；请修正，或使用该模型自带的 config.json</translation>
    </message>
</context>
<context>
    <name>hf_config.kv_heads</name>
    <message>
        <source>%1: num_attention_heads %2 is not a multiple of num_key_value_heads %3; each key/value head serves a whole group of query heads: correct one of them</source>
        <translation>%1：num_attention_heads %2 不是 num_key_value_heads %3 的倍数；每个键/值头服务一整组查询头：请修正其中之一</translation>
    </message>
</context>
<context>
    <name>hf_config.missing</name>
    <message>
        <source>%1: &quot;%2&quot; is missing; every config.json of this architecture has it: use the model&apos;s own config.json</source>
        <translation>%1：缺少 &quot;%2&quot;；该架构的每个 config.json 都有这一项：请使用该模型自带的 config.json</translation>
    </message>
</context>
<context>
    <name>hf_config.mlp_bias</name>
    <message>
        <source>%1: &quot;mlp_bias&quot;: true is not supported; the LLaMA block&apos;s MLP has no biases</source>
        <translation>%1：不支持 &quot;mlp_bias&quot;: true；LLaMA 块的 MLP 没有偏置</translation>
    </message>
</context>
<context>
    <name>hf_config.no_architecture</name>
    <message>
        <source>%1: neither &quot;architectures&quot; nor &quot;model_type&quot; says which model this is; is it a Hugging Face config.json?</source>
        <translation>%1：&quot;architectures&quot; 和 &quot;model_type&quot; 都没有说明这是哪种模型；这是 Hugging Face 的 config.json 吗？</translation>
    </message>
</context>
<context>
    <name>hf_config.not_file</name>
    <message>
        <source>%1: is not a regular file; give a model&apos;s config.json</source>
        <translation>%1：不是普通文件；请给出模型的 config.json</translation>
    </message>
</context>
<context>
    <name>hf_config.not_found</name>
    <message>
        <source>%1: file not found; give a model&apos;s config.json or the folder that holds it</source>
        <translation>%1：找不到文件；请给出模型的 config.json 或包含它的文件夹</translation>
    </message>
</context>
<context>
    <name>hf_config.not_llama</name>
    <message>
        <source>model &apos;%1&apos; is not in the LLaMA layout (token_embedding, llama_block..., rmsnorm, lm_head), so it has no Hugging Face config; export its model.safetensors instead</source>
        <translation>模型“%1”不是 LLaMA 结构（token_embedding、llama_block…、rmsnorm、lm_head），因此没有 Hugging Face 配置；请改为导出它的 model.safetensors</translation>
    </message>
</context>
<context>
    <name>hf_config.not_object</name>
    <message>
        <source>%1: a config.json is one JSON object (&quot;architectures&quot;, &quot;hidden_size&quot;, ...), got %2; point to a model&apos;s config.json</source>
        <translation>%1：config.json 是一个 JSON 对象（&quot;architectures&quot;、&quot;hidden_size&quot; 等），实际为 %2；请指向模型的 config.json</translation>
    </message>
</context>
<context>
    <name>hf_config.real_range</name>
    <message>
        <source>%1: &quot;%2&quot; must be a number greater than %3 and less than %4, got %5; correct it or use the model&apos;s own config.json</source>
        <translation>%1：&quot;%2&quot; 必须是大于 %3 且小于 %4 的数，实际为 %5；请修正，或使用该模型自带的 config.json</translation>
    </message>
</context>
<context>
    <name>hf_config.rope_scaling</name>
    <message>
        <source>%1: &quot;rope_scaling&quot; must be null or an object such as Llama 3&apos;s {&quot;rope_type&quot;: &quot;llama3&quot;, &quot;factor&quot;: 8.0, ...}, got %2</source>
        <translation>%1：&quot;rope_scaling&quot; 必须为 null 或对象，例如 Llama 3 的 {&quot;rope_type&quot;: &quot;llama3&quot;, &quot;factor&quot;: 8.0, ...}，实际为 %2</translation>
    </message>
</context>
<context>
    <name>hf_config.rope_type</name>
    <message>
        <source>%1: rope_scaling of type &apos;%2&apos; is not supported; Headroom builds plain RoPE (rope_scaling null) and Llama 3&apos;s (&quot;rope_type&quot;: &quot;llama3&quot;)</source>
        <translation>%1：不支持类型为“%2”的 rope_scaling；Headroom 支持普通 RoPE（rope_scaling 为 null）和 Llama 3 的缩放（&quot;rope_type&quot;: &quot;llama3&quot;）</translation>
    </message>
</context>
<context>
    <name>hf_config.string</name>
    <message>
        <source>%1: &quot;%2&quot; must be a string, got %3</source>
        <translation>%1：&quot;%2&quot; 必须是字符串，实际为 %3</translation>
    </message>
</context>
<context>
    <name>hf_config.too_large</name>
    <message>
        <source>%1: %2 bytes is larger than a config.json can be (%3 bytes); is it the right file?</source>
        <translation>%1：%2 字节，超出 config.json 可能的大小（%3 字节）；文件是否选对了？</translation>
    </message>
</context>
<context>
    <name>hf_config.torch_dtype</name>
    <message>
        <source>%1: &quot;torch_dtype&quot; &apos;%2&apos; is not one Headroom reads; it reads float32, bfloat16 and float16</source>
        <translation>%1：Headroom 不读取 &quot;torch_dtype&quot; “%2”；支持 float32、bfloat16 和 float16</translation>
    </message>
</context>
<context>
    <name>hf_config.unreadable</name>
    <message>
        <source>%1: cannot be read; check its permissions</source>
        <translation>%1：无法读取；请检查其权限</translation>
    </message>
</context>
<context>
    <name>hf_export.copy</name>
    <message>
        <source>cannot copy the tokenizer %1 to %2 (%3)</source>
        <translation>无法把分词器 %1 复制到 %2（%3）</translation>
    </message>
</context>
<context>
    <name>hf_export.folder</name>
    <message>
        <source>cannot create the folder %1 (%2); pick a folder you can write to</source>
        <translation>无法创建文件夹 %1（%2）；请选择一个有写权限的文件夹</translation>
    </message>
</context>
<context>
    <name>hf_export.tokenizer</name>
    <message>
        <source>%1 names the tokenizer file %2, which is not beside it; export from the run folder the weights were written in</source>
        <translation>%1 指明的分词器文件 %2 不在它旁边；请从写出这些权重的运行文件夹导出</translation>
    </message>
</context>
<context>
    <name>hf_folder.index</name>
    <message>
        <source>%1: %2; the index is damaged: write it again with the model&apos;s weights (save_pretrained) or download it again</source>
        <translation>%1：%2；该索引已损坏：请随模型权重重新写出（save_pretrained）或重新下载</translation>
    </message>
</context>
<context>
    <name>hf_folder.index_tensor</name>
    <message>
        <source>%1 places tensor &apos;%2&apos; in %3, which does not hold it; the shards and the index do not belong together: download them again</source>
        <translation>%1 把张量“%2”放在 %3 中，但该文件里没有它；分片与索引不配套：请重新下载</translation>
    </message>
</context>
<context>
    <name>hf_folder.missing_file</name>
    <message>
        <source>%1: file not found; a Hugging Face folder needs it</source>
        <translation>%1：找不到文件；Hugging Face 文件夹需要它</translation>
    </message>
</context>
<context>
    <name>hf_folder.missing_shard</name>
    <message>
        <source>%1 names the shard %2, which is not in %3; download the missing shard (every file the index names) and try again</source>
        <translation>%1 列出的分片 %2 不在 %3 中；请下载缺少的分片（索引列出的每个文件）后重试</translation>
    </message>
</context>
<context>
    <name>hf_folder.shard_tensor</name>
    <message>
        <source>%1 holds tensor &apos;%2&apos;, which %3 places %4; the shards and the index do not belong together: download them again</source>
        <translation>%1 中有张量“%2”，而 %3 把它放在 %4；分片与索引不配套：请重新下载</translation>
    </message>
</context>
<context>
    <name>hf_folder.shard_twice</name>
    <message>
        <source>%1: tensor &apos;%2&apos; is in two shards; the folder is damaged</source>
        <translation>%1：张量“%2”出现在两个分片中；文件夹已损坏</translation>
    </message>
</context>
<context>
    <name>hf_folder.too_large</name>
    <message>
        <source>%1: %2 bytes is more than such a file can be (%3 bytes); the folder is damaged or the file is not what its name says</source>
        <translation>%1：%2 字节，超出此类文件可能的大小（%3 字节）；文件夹已损坏，或文件与其名称不符</translation>
    </message>
</context>
<context>
    <name>hf_folder.unreadable</name>
    <message>
        <source>%1: cannot be read; check its permissions</source>
        <translation>%1：无法读取；请检查其权限</translation>
    </message>
</context>
<context>
    <name>hrapp::BeforeAfterView</name>
    <message>
        <source>Compare before and after</source>
        <translation>比较训练前后</translation>
    </message>
    <message>
        <source>Continue the prompt with the model the run started from and with the trained one, greedy and sampled with the same seed</source>
        <translation>分别用运行开始时的模型和训练后的模型续写提示词，贪心解码和使用相同种子的采样</translation>
    </message>
    <message>
        <source>&lt;b&gt;Before&lt;/b&gt; (the starting model)</source>
        <translation>&lt;b&gt;之前&lt;/b&gt;（起始模型）</translation>
    </message>
    <message>
        <source>&lt;b&gt;After&lt;/b&gt; (the trained model)</source>
        <translation>&lt;b&gt;之后&lt;/b&gt;（训练后的模型）</translation>
    </message>
    <message>
        <source>Greedy</source>
        <translation>贪心</translation>
    </message>
    <message>
        <source>Sampled</source>
        <translation>采样</translation>
    </message>
    <message>
        <source>After a language-model run: its starting model beside the trained one.</source>
        <translation>语言模型运行结束后：起始模型与训练后的模型并排对比。</translation>
    </message>
    <message>
        <source>Run %1: press Compare to continue the prompt with both models.</source>
        <translation>运行 %1：按“比较”用两个模型续写提示词。</translation>
    </message>
    <message>
        <source>Validation loss %1 at step 0, %2 after training</source>
        <translation>验证损失：第 0 步 %1，训练后 %2</translation>
    </message>
    <message>
        <source>Generating with both models…</source>
        <translation>正在用两个模型生成…</translation>
    </message>
    <message>
        <source>Before: this LoRA run&apos;s model with its adapters switched off (the base it started from); after: with them on.</source>
        <translation>之前：关闭适配器的这次 LoRA 运行的模型（它开始时的基座）；之后：打开适配器。</translation>
    </message>
    <message>
        <source>Before: the weights the run started from (%1); after: the trained weights.</source>
        <translation>之前：运行开始时的权重（%1）；之后：训练后的权重。</translation>
    </message>
    <message>
        <source>Before: the run&apos;s checkpoint at step 0 (%1); after: the trained weights.</source>
        <translation>之前：运行第 0 步的检查点（%1）；之后：训练后的权重。</translation>
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
    <message>
        <source>Fortunes (text)</source>
        <translation>Fortunes（文本）</translation>
    </message>
    <message>
        <source>Text file (UTF-8)</source>
        <translation>文本文件（UTF-8）</translation>
    </message>
    <message>
        <source>Bytes (256)</source>
        <translation>字节（256）</translation>
    </message>
    <message>
        <source>Characters of the text</source>
        <translation>文本中的字符</translation>
    </message>
    <message>
        <source>BPE (SentencePiece)</source>
        <translation>BPE（SentencePiece）</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> 个词元</translation>
    </message>
    <message>
        <source>The BPE vocabulary, trained on the training text before the run</source>
        <translation>BPE 词表，运行前在训练文本上训练</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>词元</translation>
    </message>
    <message>
        <source>Choose a text file</source>
        <translation>选择文本文件</translation>
    </message>
    <message>
        <source>Text (*.txt *.md);;All files (*)</source>
        <translation>文本 (*.txt *.md);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Preview (validation text)</source>
        <translation>预览（验证文本）</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>a UTF-8 text file</source>
        <translation>UTF-8 文本文件</translation>
    </message>
    <message>
        <source>CIFAR-10</source>
        <translation>CIFAR-10</translation>
    </message>
    <message>
        <source>CIFAR-10 folder</source>
        <translation>CIFAR-10 文件夹</translation>
    </message>
    <message>
        <source>CSV table</source>
        <translation>CSV 表格</translation>
    </message>
    <message>
        <source>TSV table</source>
        <translation>TSV 表格</translation>
    </message>
    <message>
        <source>The column to predict (a class); every other column must hold numbers</source>
        <translation>要预测的列（类别）；其他列都必须是数值</translation>
    </message>
    <message>
        <source>Class column</source>
        <translation>类别列</translation>
    </message>
    <message>
        <source>Choose a table</source>
        <translation>选择表格</translation>
    </message>
    <message>
        <source>Tables (*.csv *.tsv *.txt);;All files (*)</source>
        <translation>表格 (*.csv *.tsv *.txt);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Choose the cifar-10-batches-bin folder</source>
        <translation>选择 cifar-10-batches-bin 文件夹</translation>
    </message>
    <message>
        <source>Preview (the table&apos;s first rows)</source>
        <translation>预览（表格的前几行）</translation>
    </message>
    <message>
        <source>a CSV or TSV file with a header row</source>
        <translation>带表头行的 CSV 或 TSV 文件</translation>
    </message>
    <message>
        <source>the cifar-10-batches-bin folder (data_batch_1.bin, …, test_batch.bin)</source>
        <translation>cifar-10-batches-bin 文件夹（data_batch_1.bin, …, test_batch.bin）</translation>
    </message>
    <message>
        <source>Choose a table file.</source>
        <translation>请选择一个表格文件。</translation>
    </message>
    <message>
        <source>Choose the CIFAR-10 folder.</source>
        <translation>请选择 CIFAR-10 文件夹。</translation>
    </message>
    <message>
        <source>A model&apos;s tokenizer file</source>
        <translation>模型自带的分词器文件</translation>
    </message>
    <message>
        <source>tokenizer.json or tokenizer.model, or its model folder</source>
        <translation>tokenizer.json 或 tokenizer.model，或其模型文件夹</translation>
    </message>
    <message>
        <source>From the tokenizer</source>
        <translation>由分词器决定</translation>
    </message>
    <message>
        <source>Llama 3</source>
        <translation>Llama 3</translation>
    </message>
    <message>
        <source>ChatML (Qwen)</source>
        <translation>ChatML（Qwen）</translation>
    </message>
    <message>
        <source>Mistral [INST]</source>
        <translation>Mistral [INST]</translation>
    </message>
    <message>
        <source>Plain (the texts only)</source>
        <translation>纯文本（仅内容）</translation>
    </message>
    <message>
        <source>How a conversation is written for the model; the loss is taken on the answers only</source>
        <translation>对话如何写给模型；损失只在回答上计算</translation>
    </message>
    <message>
        <source>Chat template</source>
        <translation>对话模板</translation>
    </message>
    <message>
        <source>Padded: one row a sequence</source>
        <translation>填充：每行一个序列</translation>
    </message>
    <message>
        <source>Packed: rows joined</source>
        <translation>打包：各行拼接</translation>
    </message>
    <message>
        <source>Sequences</source>
        <translation>序列</translation>
    </message>
    <message>
        <source>Choose a tokenizer file</source>
        <translation>选择分词器文件</translation>
    </message>
    <message>
        <source>Tokenizers (tokenizer.json tokenizer.model *.json *.model);;All files (*)</source>
        <translation>分词器 (tokenizer.json tokenizer.model *.json *.model);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Choose instruction rows</source>
        <translation>选择指令数据</translation>
    </message>
    <message>
        <source>Choose a JSONL file.</source>
        <translation>请选择一个 JSONL 文件。</translation>
    </message>
    <message>
        <source> (from the tokenizer)</source>
        <translation>（由分词器决定）</translation>
    </message>
    <message>
        <source>Prompts and answers, or conversations: the loss only on the answers</source>
        <translation>提示与回答，或对话：损失只在回答上计算</translation>
    </message>
    <message>
        <source>Preview (the first training rows)</source>
        <translation>预览（前几行训练数据）</translation>
    </message>
    <message>
        <source>Instruction rows (JSONL or JSON)</source>
        <translation>指令数据行（JSONL 或 JSON）</translation>
    </message>
    <message>
        <source>Instruction rows (*.jsonl *.json);;All files (*)</source>
        <translation>指令数据行 (*.jsonl *.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>a .jsonl or .json file: prompt/completion, messages, Alpaca or ShareGPT rows</source>
        <translation>一个 .jsonl 或 .json 文件：prompt/completion、messages、Alpaca 或 ShareGPT 格式的行</translation>
    </message>
    <message>
        <source>element %1 (line %2)</source>
        <translation>第 %1 个元素（第 %2 行）</translation>
    </message>
    <message>
        <source>line %1</source>
        <translation>第 %1 行</translation>
    </message>
    <message>
        <source>── %1: %2 tokens ──</source>
        <translation>── %1：%2 个词元 ──</translation>
    </message>
    <message>
        <source>── %1: %2 tokens of %3: cut, the last %4 not read ──</source>
        <translation>── %1：%2 个词元，序列长度 %3：被截断，最后 %4 个不会读到 ──</translation>
    </message>
    <message>
        <source>── %1: %2 tokens of %3 ──</source>
        <translation>── %1：%2 个词元，序列长度 %3 ──</translation>
    </message>
    <message>
        <source>%1 training and %2 validation rows (a JSON array, %5 layout); %3 template%4; the loss on the text in ⟦ ⟧</source>
        <translation>%1 行训练、%2 行验证（JSON 数组，%5 格式）；%3 模板%4；损失在 ⟦ ⟧ 中的文本上计算</translation>
    </message>
    <message>
        <source>%1 training and %2 validation rows (%5 layout); %3 template%4; the loss on the text in ⟦ ⟧</source>
        <translation>%1 行训练、%2 行验证（%5 格式）；%3 模板%4；损失在 ⟦ ⟧ 中的文本上计算</translation>
    </message>
    <message>
        <source>Token counts: the BPE is trained on these rows when the run starts; choose bytes, characters or a model&apos;s tokenizer to count here.</source>
        <translation>词元数：BPE 在运行开始时才用这些行训练；选择字节、字符或模型自己的分词器即可在此计数。</translation>
    </message>
    <message>
        <source>The model has no sequence length: build a language model to count rows against it.</source>
        <translation>模型没有序列长度：请构建一个语言模型，才能按它统计各行。</translation>
    </message>
    <message>
        <source>Packed: the file&apos;s %1 rows make %2 training and %3 validation sequences of %4 tokens (%5 rows longer than one sequence run on into the next).</source>
        <translation>拼接：文件的 %1 行组成 %2 个训练序列和 %3 个验证序列，每个 %4 个词元（%5 行比一个序列长，延续到下一个序列）。</translation>
    </message>
    <message>
        <source>Padded: %1 of the file&apos;s %2 rows are longer than a sequence of %3 tokens and are cut.</source>
        <translation>填充：文件的 %2 行中有 %1 行长于 %3 个词元的序列，会被截断。</translation>
    </message>
    <message>
        <source>The longest row: %1, %2 tokens (%3 tokenizer).</source>
        <translation>最长的一行：%1，%2 个词元（%3 分词器）。</translation>
    </message>
</context>
<context>
    <name>hrapp::ExportDialog</name>
    <message>
        <source>Hugging Face folder (merged)</source>
        <translation>Hugging Face 文件夹（已合并）</translation>
    </message>
    <message>
        <source>peft adapter</source>
        <translation>peft 适配器</translation>
    </message>
    <message>
        <source>GGUF file</source>
        <translation>GGUF 文件</translation>
    </message>
    <message>
        <source>ONNX file</source>
        <translation>ONNX 文件</translation>
    </message>
    <message>
        <source>Export %1: %2</source>
        <translation>导出 %1：%2</translation>
    </message>
    <message>
        <source>config.json, the weights (sharded above 5 GB) and the tokenizer, for transformers&apos; from_pretrained. A LoRA run&apos;s adapters are merged into the weights.</source>
        <translation>config.json、权重（超过 5 GB 时分片）和分词器，供 transformers 的 from_pretrained 加载。LoRA 运行的适配器会合并进权重。</translation>
    </message>
    <message>
        <source>adapter_config.json and adapter_model.safetensors of a LoRA run, for peft&apos;s PeftModel.from_pretrained on the base model.</source>
        <translation>LoRA 运行的 adapter_config.json 和 adapter_model.safetensors，供 peft 的 PeftModel.from_pretrained 加载到基座模型上。</translation>
    </message>
    <message>
        <source>One file for llama.cpp, Ollama and LM Studio, the tokenizer and chat template inside. A LoRA run&apos;s adapters are merged.</source>
        <translation>一个供 llama.cpp、Ollama 和 LM Studio 使用的文件，内含分词器和对话模板。LoRA 运行的适配器会被合并。</translation>
    </message>
    <message>
        <source>One ONNX file (opset 17) of an image or table model, its input&apos;s normalisation in the graph, for ONNX Runtime.</source>
        <translation>图像或表格模型的一个 ONNX 文件（opset 17），输入的归一化在计算图中，供 ONNX Runtime 使用。</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Folder:</source>
        <translation>文件夹：</translation>
    </message>
    <message>
        <source>File:</source>
        <translation>文件：</translation>
    </message>
    <message>
        <source>f16 (half precision)</source>
        <translation>f16（半精度）</translation>
    </message>
    <message>
        <source>bf16</source>
        <translation>bf16</translation>
    </message>
    <message>
        <source>f32 (as trained)</source>
        <translation>f32（与训练时相同）</translation>
    </message>
    <message>
        <source>q8_0 (8-bit blocks, about half of f16)</source>
        <translation>q8_0（8 位分块，约为 f16 的一半）</translation>
    </message>
    <message>
        <source>Weight type:</source>
        <translation>权重类型：</translation>
    </message>
    <message>
        <source>Written</source>
        <translation>已写入</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Export into folder</source>
        <translation>导出到文件夹</translation>
    </message>
    <message>
        <source>Export as</source>
        <translation>导出为</translation>
    </message>
    <message>
        <source>GGUF files (*.gguf)</source>
        <translation>GGUF 文件 (*.gguf)</translation>
    </message>
    <message>
        <source>ONNX files (*.onnx)</source>
        <translation>ONNX 文件 (*.onnx)</translation>
    </message>
    <message>
        <source>Say where to write the export</source>
        <translation>请指定导出写到哪里</translation>
    </message>
    <message>
        <source>Writing %1…</source>
        <translation>正在写入 %1…</translation>
    </message>
    <message>
        <source>Wrote 1 file, %1.</source>
        <translation>已写入 1 个文件，%1。</translation>
    </message>
    <message>
        <source>Wrote %1 files, %2 in all.</source>
        <translation>已写入 %1 个文件，共 %2。</translation>
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
    <message>
        <source>Ranks</source>
        <translation>rank</translation>
    </message>
    <message>
        <source>host only; GPUs as the ranks report them</source>
        <translation>仅主机；GPU 为各 rank 报告的数据</translation>
    </message>
    <message>
        <source>&lt;b&gt;No NVIDIA driver found&lt;/b&gt; on this machine: the GPUs shown are those of the run&apos;s ranks, as they report them. The host charts are this machine&apos;s, with each rank&apos;s resident memory.</source>
        <translation>本机&lt;b&gt;未找到 NVIDIA 驱动&lt;/b&gt;：显示的 GPU 是本次运行各 rank 报告的 GPU。主机图表为本机的数据，并含每个 rank 的常驻内存。</translation>
    </message>
    <message>
        <source>%1 used (NVML)</source>
        <translation>%1 已用（NVML）</translation>
    </message>
    <message>
        <source>rank %1 resident (RSS)</source>
        <translation>rank %1 常驻内存（RSS）</translation>
    </message>
    <message>
        <source>rank %1 resident (RSS, %2)</source>
        <translation>rank %1 常驻内存（RSS，%2）</translation>
    </message>
    <message>
        <source>%1 CPU</source>
        <translation>%1 CPU</translation>
    </message>
    <message>
        <source>%1 RAM used</source>
        <translation>%1 已用内存</translation>
    </message>
    <message>
        <source>%1 GPU %2</source>
        <translation>%1 GPU %2</translation>
    </message>
    <message>
        <source>Memory per rank (ledger)</source>
        <translation>每个 rank 的内存（账本）</translation>
    </message>
    <message>
        <source>MiB</source>
        <translation>MiB</translation>
    </message>
    <message>
        <source>rank %1</source>
        <translation>rank %1</translation>
    </message>
    <message>
        <source>rank %1: stage %2</source>
        <translation>rank %1：第 %2 阶段</translation>
    </message>
    <message>
        <source>rank %1: stage %2 of replica %3</source>
        <translation>rank %1：副本 %3 的第 %2 阶段</translation>
    </message>
    <message>
        <source>%1 ledger allocated</source>
        <translation>%1 账本已分配</translation>
    </message>
    <message>
        <source>%1 ledger reserved</source>
        <translation>%1 账本已保留</translation>
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
        <translation>恢复(&amp;R)</translation>
    </message>
    <message>
        <source>Resume training (F7)</source>
        <translation>恢复训练（F7）</translation>
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
    <message>
        <source>The run&apos;s files could not be written to %1: %2</source>
        <translation>无法将运行的文件写入 %1：%2</translation>
    </message>
    <message>
        <source>Weights and run record written to %1</source>
        <translation>权重和运行记录已写入 %1</translation>
    </message>
    <message>
        <source>Sample</source>
        <translation>采样</translation>
    </message>
    <message>
        <source>%1 (continued)</source>
        <translation>%1（继续）</translation>
    </message>
    <message>
        <source>Pause every rank after the same step (F6)</source>
        <translation>让所有 rank 在同一步之后暂停（F6）</translation>
    </message>
    <message>
        <source>No model was chosen, so the builder now holds %1 (Model &gt; Presets for another).</source>
        <translation>尚未选择模型，因此构建器现在使用 %1（可在“模型 &gt; 预设”中选择其他模型）。</translation>
    </message>
    <message>
        <source>From a Hugging Face &amp;config…</source>
        <translation>从 Hugging Face 配置(&amp;C)…</translation>
    </message>
    <message>
        <source>Build a Llama, Mistral or Qwen2 model from its config.json (no weights are needed to plan it)</source>
        <translation>根据 config.json 构建 Llama、Mistral 或 Qwen2 模型（做内存规划无需权重）</translation>
    </message>
    <message>
        <source>From a Hugging Face config</source>
        <translation>从 Hugging Face 配置</translation>
    </message>
    <message>
        <source>Hugging Face config (config.json *.json);;All files (*)</source>
        <translation>Hugging Face 配置 (config.json *.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Could not open %1</source>
        <translation>无法打开 %1</translation>
    </message>
    <message>
        <source>Open model &amp;folder…</source>
        <translation>打开模型文件夹(&amp;F)…</translation>
    </message>
    <message>
        <source>Start from a model&apos;s weights: a Hugging Face model folder, a .safetensors file or a peft adapter folder (or drop one on the window)</source>
        <translation>从模型的权重开始：Hugging Face 模型文件夹、.safetensors 文件或 peft 适配器文件夹（也可拖放到窗口上）</translation>
    </message>
    <message>
        <source>Open model folder</source>
        <translation>打开模型文件夹</translation>
    </message>
    <message>
        <source>Opened %1: the next run starts from its weights</source>
        <translation>已打开 %1：下一次运行将从其权重开始</translation>
    </message>
    <message>
        <source>Initial weights: %1</source>
        <translation>初始权重：%1</translation>
    </message>
    <message>
        <source>%1 parameters stored as %2 in one file, %3</source>
        <translation>%1 个参数，以 %2 存储于一个文件，%3</translation>
    </message>
    <message>
        <source>%1 parameters stored as %2 in %3 files, %4</source>
        <translation>%1 个参数，以 %2 存储于 %3 个文件，%4</translation>
    </message>
    <message>
        <source>LoRA adapter (rank %1, alpha %2) on %3</source>
        <translation>LoRA 适配器（秩 %1，alpha %2），基础模型 %3</translation>
    </message>
    <message>
        <source>No tokenizer beside the weights: choose one in the Data panel</source>
        <translation>权重旁没有分词器：请在“数据”面板中选择一个</translation>
    </message>
    <message>
        <source> (tokenizer_config.json has a template Headroom does not write)</source>
        <translation>（tokenizer_config.json 中的模板不是 Headroom 所写的格式）</translation>
    </message>
    <message>
        <source> (tokenizer_config.json: %1)</source>
        <translation>（tokenizer_config.json：%1）</translation>
    </message>
    <message>
        <source>Tokenizer: %1, %2 tokens; chat template %3</source>
        <translation>分词器：%1，%2 个词元；对话模板 %3</translation>
    </message>
    <message>
        <source>Fine-tune from this run</source>
        <translation>从此运行微调</translation>
    </message>
    <message>
        <source>The run &quot;%1&quot; wrote no weights (%2 is not there); pick a run that finished or saved a checkpoint</source>
        <translation>运行“%1”没有写出权重（%2 不存在）；请选择已完成或已保存检查点的运行</translation>
    </message>
    <message>
        <source>The next run starts from the weights of run &quot;%1&quot;</source>
        <translation>下一次运行将从运行“%1”的权重开始</translation>
    </message>
</context>
<context>
    <name>hrapp::MemoryPlanPanel</name>
    <message>
        <source>Fine-tuning on 1 to 8 cards</source>
        <translation>在 1 到 8 张卡上微调</translation>
    </message>
    <message>
        <source>Computing the fine-tuning table for %1 per card…</source>
        <translation>正在计算每张卡 %1 的微调表…</translation>
    </message>
    <message>
        <source>No fine-tuning table for these settings: %1</source>
        <translation>这些设置没有微调表：%1</translation>
    </message>
    <message>
        <source>Per card, the memory at this batch, sequence and precision, with only the method, checkpointing and ZeRO-3 changed (ZeRO-3 on one card keeps the parameters in host memory); “(over)”: more than %1 (the memory limit, else the device&apos;s free memory); “-”: no such configuration. The same search as Fit to device and `headroom plan --budget`.</source>
        <translation>每张卡在此批大小、序列长度和精度下的内存，只改变方法、检查点和 ZeRO-3（单卡 ZeRO-3 把参数放在主机内存）；“（超出）”：超过 %1（内存上限，否则为设备的空闲内存）；“-”：没有这种配置。与“适配设备”和 `headroom plan --budget` 相同的搜索。</translation>
    </message>
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
    <message>
        <source>Nothing fits in %1 at batch %2 as set up; sharded, it %3. Choose the ranks in Training setup, or lower the batch size.</source>
        <translation>按当前设置，批次大小 %2 时 %1 内没有可行配置；分片后%3。请在“训练设置”中选择 rank 数，或减小批次大小。</translation>
    </message>
    <message>
        <source> · the data set takes %1 of RAM</source>
        <translation> · 数据集占用 %1 内存</translation>
    </message>
    <message>
        <source>CUDA context and handles %1, NCCL %2 %3</source>
        <translation>CUDA 上下文与句柄 %1，NCCL %2 %3</translation>
    </message>
    <message>
        <source>as an earlier run on this GPU measured it</source>
        <translation>（由此前在该 GPU 上的一次运行测得）</translation>
    </message>
    <message>
        <source>estimated from NCCL&apos;s default buffers until a run measures it</source>
        <translation>（按 NCCL 默认缓冲区估算，待一次运行实测）</translation>
    </message>
    <message>
        <source>CUDA context and handles %1</source>
        <translation>CUDA 上下文与句柄 %1</translation>
    </message>
    <message>
        <source>The driver will see %1 per process: %2 reserved by the caching allocator and %3 outside the ledger (%4); %5 with the 5 % margin must fit.</source>
        <translation>驱动将看到每个进程 %1：缓存分配器保留 %2，账本之外 %3（%4）；含 5 % 余量的 %5 必须放得下。</translation>
    </message>
    <message>
        <source>%1 % pruned</source>
        <translation>剪枝 %1 %</translation>
    </message>
    <message>
        <source>int8 with a scale per row</source>
        <translation>int8，每行一个缩放因子</translation>
    </message>
    <message>
        <source>int4 with a scale per %1 values</source>
        <translation>int4，每 %1 个值一个缩放因子</translation>
    </message>
    <message>
        <source>, </source>
        <comment>between the parts of a list</comment>
        <translation>，</translation>
    </message>
    <message>
        <source>What-if after training: %1</source>
        <translation>训练后的假设分析：%1</translation>
    </message>
    <message>
        <source>parameter offload</source>
        <translation>参数卸载</translation>
    </message>
    <message>
        <source>; offload moves %1 per step, about %2 ms over the host link (%3/s)</source>
        <translation>；卸载每步传输 %1，经主机链路（%3/s）约 %2 毫秒</translation>
    </message>
    <message>
        <source> · %1 of parameters, gradients and optimizer state in host memory</source>
        <translation> · 主机内存中有 %1 的参数、梯度和优化器状态</translation>
    </message>
    <message>
        <source>LoRA rank %1</source>
        <translation>LoRA 秩 %1</translation>
    </message>
    <message>
        <source>What-if after training (%1): the %2 weight tensors would be stored in at most &lt;b&gt;%3&lt;/b&gt; instead of %4 (%5 of other tensors as they are); the run measures the test accuracy (a language model&apos;s validation loss) before and after.</source>
        <translation>训练后的假设分析（%1）：%2 个权重张量这样存储最多占 &lt;b&gt;%3&lt;/b&gt;，原为 %4（另有 %5 的其他张量保持不变）；运行会测量变换前后的测试准确率（语言模型为验证损失）。</translation>
    </message>
    <message>
        <source>LoRA rank %1 on an %2 base</source>
        <translation>LoRA 秩 %1，基座为 %2</translation>
    </message>
    <message>
        <source>nf4 (NormalFloat) with a scale per %1 values, the scales quantised too</source>
        <translation>nf4（NormalFloat），每 %1 个值一个缩放系数，缩放系数本身也量化</translation>
    </message>
    <message>
        <source>One training step</source>
        <translation>一个训练步骤</translation>
    </message>
    <message>
        <source>Export trace…</source>
        <translation>导出跟踪…</translation>
    </message>
    <message>
        <source>Save the step&apos;s timeline as a Chrome trace file for Perfetto or chrome://tracing</source>
        <translation>将该步骤的时间线保存为 Chrome 跟踪文件，可用 Perfetto 或 chrome://tracing 打开</translation>
    </message>
    <message>
        <source>Export the step&apos;s timeline</source>
        <translation>导出该步骤的时间线</translation>
    </message>
    <message>
        <source>Chrome trace (*.json)</source>
        <translation>Chrome 跟踪（*.json）</translation>
    </message>
    <message>
        <source>Measured, step %1</source>
        <translation>实测，第 %1 步</translation>
    </message>
    <message>
        <source>Predicted: %1</source>
        <translation>预测：%1</translation>
    </message>
    <message>
        <source>Measured in step %1: %2</source>
        <translation>第 %1 步实测：%2</translation>
    </message>
    <message>
        <source>measured step %1</source>
        <translation>实测步骤 %1</translation>
    </message>
    <message>
        <source>predicted</source>
        <translation>预测</translation>
    </message>
    <message>
        <source>Could not write %1 (%2); choose another file.</source>
        <translation>无法写入 %1（%2）；请选择其他文件。</translation>
    </message>
</context>
<context>
    <name>hrapp::ModelFolderOpener</name>
    <message>
        <source>Open model folder</source>
        <translation>打开模型文件夹</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Reading %1…</source>
        <translation>正在读取 %1…</translation>
    </message>
    <message>
        <source>the folder could not be read</source>
        <translation>无法读取该文件夹</translation>
    </message>
    <message>
        <source>Could not open %1:
%2</source>
        <translation>无法打开 %1：
%2</translation>
    </message>
    <message>
        <source>The base model of %1 (%2)</source>
        <translation>%1 的基础模型（%2）</translation>
    </message>
    <message>
        <source>The config.json of %1</source>
        <translation>%1 的 config.json</translation>
    </message>
    <message>
        <source>Hugging Face config (config.json *.json);;All files (*)</source>
        <translation>Hugging Face 配置 (config.json *.json);;所有文件 (*)</translation>
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
    <message>
        <source>Each rank has its own memory: pick the one the chart shows</source>
        <translation>每个 rank 有各自的内存：选择图表显示哪一个</translation>
    </message>
    <message>
        <source>Memory of</source>
        <translation>内存：</translation>
    </message>
    <message>
        <source>rank %1</source>
        <translation>rank %1</translation>
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
    <message>
        <source>&lt;p&gt;%1&lt;/p&gt;&lt;p&gt;&lt;b&gt;%2&lt;/b&gt;&lt;/p&gt;&lt;p&gt;Command line: &lt;code&gt;headroom train %3&lt;/code&gt;&lt;/p&gt;</source>
        <translation>&lt;p&gt;%1&lt;/p&gt;&lt;p&gt;&lt;b&gt;%2&lt;/b&gt;&lt;/p&gt;&lt;p&gt;命令行：&lt;code&gt;headroom train %3&lt;/code&gt;&lt;/p&gt;</translation>
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
    <message>
        <source>Continued</source>
        <translation>继续关系</translation>
    </message>
    <message>
        <source>Continue training…</source>
        <translation>继续训练…</translation>
    </message>
    <message>
        <source>continues #%1</source>
        <translation>接续 #%1</translation>
    </message>
    <message>
        <source>continued in #%1</source>
        <translation>已在 #%1 中继续</translation>
    </message>
    <message>
        <source>Continue training links a stopped or failed run to the run that trained it on from its checkpoint, in the same folder</source>
        <translation>“继续训练”把已停止或失败的运行与在同一文件夹中从其检查点接着训练的运行关联起来</translation>
    </message>
    <message>
        <source>Select one stopped or failed run to continue it from its last checkpoint</source>
        <translation>选择一个已停止或失败的运行，从它最后的检查点继续训练</translation>
    </message>
    <message>
        <source>Train this run on from its checkpoint at step %1 in %2, to a total length you choose (unlike Resume, which goes on after Pause in a run in progress)</source>
        <translation>从 %2 中第 %1 步的检查点接着训练此运行，直到你选择的总长度（不同于“恢复”，后者是在进行中的运行暂停之后接着进行）</translation>
    </message>
    <message>
        <source>The run is not in the history</source>
        <translation>历史记录中没有该运行</translation>
    </message>
    <message>
        <source>A run is in progress; stop it first</source>
        <translation>有运行正在进行；请先停止它</translation>
    </message>
    <message>
        <source>The run is still in progress</source>
        <translation>该运行仍在进行中</translation>
    </message>
    <message>
        <source>Run #%1 already continued this run from its folder&apos;s checkpoint; continue that run instead</source>
        <translation>运行 #%1 已从该文件夹的检查点继续了此运行；请改为继续那个运行</translation>
    </message>
    <message>
        <source>The run kept no output folder, so there is no checkpoint to continue from</source>
        <translation>该运行没有保留输出文件夹，因此没有可继续的检查点</translation>
    </message>
    <message>
        <source>The run&apos;s folder %1 is gone, and its checkpoints with it</source>
        <translation>该运行的文件夹 %1 已不存在，其中的检查点也随之消失</translation>
    </message>
    <message>
        <source>%1 holds no checkpoint: the run ended before its first one (--save-every); start it again</source>
        <translation>%1 中没有检查点：该运行在写入第一个检查点（--save-every）之前就结束了；请重新开始</translation>
    </message>
    <message>
        <source>Continue training</source>
        <translation>继续训练</translation>
    </message>
    <message>
        <source>&quot;%1&quot; has a checkpoint at step %2 (epoch %3) in %4. Training goes on from there with the run&apos;s own settings to the total length below.</source>
        <translation>“%1”在 %4 中有第 %2 步（第 %3 轮）的检查点。训练将以该运行自身的设置从那里继续，直到下面的总长度。</translation>
    </message>
    <message>
        <source>Total steps:</source>
        <translation>总步数：</translation>
    </message>
    <message>
        <source>Total epochs:</source>
        <translation>总轮数：</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>It trained on %1 ranks and goes on on %1 ranks.</source>
        <translation>它在 %1 个 rank 上训练，将继续在 %1 个 rank 上训练。</translation>
    </message>
    <message>
        <source>Export as ONNX</source>
        <translation>导出为 ONNX</translation>
    </message>
    <message>
        <source>The run left no model.safetensors in an output folder, so there is no model to export</source>
        <translation>该运行没有在输出文件夹中留下 model.safetensors，因此没有可导出的模型</translation>
    </message>
    <message>
        <source>ONNX files (*.onnx)</source>
        <translation>ONNX 文件 (*.onnx)</translation>
    </message>
    <message>
        <source>Wrote %1 (%2, opset %3): input &quot;input&quot;, output &quot;logits&quot;; the input&apos;s normalisation is in the graph (docs/export.md)</source>
        <translation>已写入 %1（%2，opset %3）：输入 &quot;input&quot;，输出 &quot;logits&quot;；输入的归一化已包含在计算图中（见 docs/export.md）</translation>
    </message>
    <message>
        <source>Fine-tune from this run</source>
        <translation>从此运行微调</translation>
    </message>
    <message>
        <source>Load this run&apos;s model and settings and start the next run from the weights it wrote</source>
        <translation>载入此运行的模型和设置，下一次运行从它写出的权重开始</translation>
    </message>
    <message>
        <source>The run finished its length; Continue training is for a stopped or failed run. To train it further, start a new run from its weights: Fine-tune from this run (its menu)</source>
        <translation>该运行已训练完其长度；“继续训练”用于已停止或失败的运行。要进一步训练，请从其权重开始新的运行：“从此运行微调”（其右键菜单）</translation>
    </message>
    <message>
        <source>Export model</source>
        <translation>导出模型</translation>
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
    <message>
        <source>%1 (in the CUDA module)</source>
        <translation>%1（内置于 CUDA 模块）</translation>
    </message>
</context>
<context>
    <name>hrapp::SamplePanel</name>
    <message>
        <source>Text to continue (empty: start after a newline)</source>
        <translation>要续写的文本（为空：从一个换行符之后开始）</translation>
    </message>
    <message>
        <source>New tokens to generate</source>
        <translation>要生成的新 token 数</translation>
    </message>
    <message>
        <source>0 picks the most likely token every time (greedy, the same text every time)</source>
        <translation>为 0 时每次都选概率最高的 token（贪心，每次得到相同的文本）</translation>
    </message>
    <message>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>Sample among the K most likely tokens only (0: all)</source>
        <translation>只在概率最高的 K 个 token 中采样（0：全部）</translation>
    </message>
    <message>
        <source>Sample during the run</source>
        <translation>在运行期间采样</translation>
    </message>
    <message>
        <source>Every few seconds, generate from a copy of the weights taken between two steps</source>
        <translation>每隔几秒，用在两步之间取得的权重副本生成文本</translation>
    </message>
    <message>
        <source>Generate</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>Generated text appears here during and after a language-model run.</source>
        <translation>语言模型运行期间及结束后，生成的文本显示在这里。</translation>
    </message>
    <message>
        <source>Prompt:</source>
        <translation>提示词：</translation>
    </message>
    <message>
        <source>Tokens:</source>
        <translation>Token 数：</translation>
    </message>
    <message>
        <source>Temperature:</source>
        <translation>温度：</translation>
    </message>
    <message>
        <source>Top-k:</source>
        <translation>Top-k：</translation>
    </message>
    <message>
        <source>Waiting for the first copy of the weights…</source>
        <translation>正在等待第一份权重副本…</translation>
    </message>
    <message>
        <source>This run&apos;s model is not a language model, so there is no text to sample.</source>
        <translation>本次运行的模型不是语言模型，因此没有可采样的文本。</translation>
    </message>
    <message>
        <source>Press Generate to sample the last run&apos;s weights.</source>
        <translation>按“生成”以用上一次运行的权重采样。</translation>
    </message>
    <message>
        <source>Train a language model (gpt-tiny on text:fortunes, for example) to sample its text here.</source>
        <translation>训练一个语言模型（例如在 text:fortunes 上训练 gpt-tiny），即可在这里采样它的文本。</translation>
    </message>
    <message>
        <source>Generating from the weights of step %1…</source>
        <translation>正在用第 %1 步的权重生成…</translation>
    </message>
    <message>
        <source>Generating from %1…</source>
        <translation>正在用 %1 生成…</translation>
    </message>
    <message>
        <source>Could not generate: %1</source>
        <translation>无法生成：%1</translation>
    </message>
    <message>
        <source>%1 tokens in %2 s</source>
        <translation>%2 秒内 %1 个 token</translation>
    </message>
    <message>
        <source>The weights of step %1, during the run (%2).</source>
        <translation>运行期间第 %1 步的权重（%2）。</translation>
    </message>
    <message>
        <source>The final weights of the run, step %1 (%2).</source>
        <translation>该运行的最终权重，第 %1 步（%2）。</translation>
    </message>
    <message>
        <source>The saved weights %1 (%2).</source>
        <translation>已保存的权重 %1（%2）。</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>End this generation now; the text so far stays</source>
        <translation>立即结束本次生成；已生成的文本会保留</translation>
    </message>
    <message numerus="yes">
        <source>Stopped after %n token(s).</source>
        <translation>
            <numerusform>已在 %n 个 token 后停止。</numerusform>
        </translation>
    </message>
    <message>
        <source>Generating from the weights of step %1: %2 of %3 tokens…</source>
        <translation>正在用第 %1 步的权重生成：%2/%3 个 token…</translation>
    </message>
    <message>
        <source>Generating from %1: %2 of %3 tokens…</source>
        <translation>正在用 %1 生成：%2/%3 个 token…</translation>
    </message>
</context>
<context>
    <name>hrapp::SettingsDialog</name>
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
        <translation> Hz</translation>
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
        <translation>https://…（留空：不使用 webhook）</translation>
    </message>
    <message>
        <source>headroom train --notify settings sends to this webhook too</source>
        <translation>headroom train --notify settings 也会发送到此 webhook</translation>
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
        <translation>飞书 / Lark</translation>
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
        <source>Show a desktop notification when a run ends</source>
        <translation>运行结束时显示桌面通知</translation>
    </message>
    <message>
        <source>This desktop has no system tray for notifications</source>
        <translation>当前桌面没有可显示通知的系统托盘</translation>
    </message>
    <message>
        <source>Webhook test message delivered (HTTP %1)</source>
        <translation>Webhook 测试消息已送达（HTTP %1）</translation>
    </message>
    <message>
        <source>Headroom: test message</source>
        <translation>Headroom：测试消息</translation>
    </message>
    <message>
        <source>Notifications from Headroom arrive here.</source>
        <translation>Headroom 的通知会发送到这里。</translation>
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
        <source>Block %1: layers %2</source>
        <translation>块 %1：层 %2</translation>
    </message>
    <message>
        <source>One process (the device above)</source>
        <translation>单进程（上面选择的设备）</translation>
    </message>
    <message>
        <source>CPU × %1 ranks</source>
        <translation>CPU × %1 个 rank</translation>
    </message>
    <message>
        <source>GPUs %1 (%2 ranks)</source>
        <translation>GPU %1（%2 个 rank）</translation>
    </message>
    <message>
        <source>Train on several processes (ranks) of this machine, launched through mpirun; each rank takes its share of every batch</source>
        <translation>在本机的多个进程（rank）上训练，通过 mpirun 启动；每个 rank 承担每个批次中的一份</translation>
    </message>
    <message>
        <source>Ranks</source>
        <translation>Rank 数</translation>
    </message>
    <message>
        <source>Data parallel (replicated)</source>
        <translation>数据并行（复制）</translation>
    </message>
    <message>
        <source>Sharding spreads a run over several ranks: choose more than one in Ranks</source>
        <translation>分片把一次运行分布到多个 rank 上：请在“Rank 数”中选择多于一个</translation>
    </message>
    <message>
        <source>What-if after training</source>
        <translation>训练后的假设分析</translation>
    </message>
    <message>
        <source> %</source>
        <translation> %</translation>
    </message>
    <message>
        <source>no pruning</source>
        <translation>不剪枝</translation>
    </message>
    <message>
        <source>Prune</source>
        <translation>剪枝</translation>
    </message>
    <message>
        <source>No quantisation</source>
        <translation>不量化</translation>
    </message>
    <message>
        <source>int8 (a scale per output row)</source>
        <translation>int8（每个输出行一个缩放因子）</translation>
    </message>
    <message>
        <source>int4 (a scale per 64 values)</source>
        <translation>int4（每 64 个值一个缩放因子）</translation>
    </message>
    <message>
        <source>Quantise</source>
        <translation>量化</translation>
    </message>
    <message>
        <source>Tensor-parallel head (last layer split)</source>
        <translation>张量并行输出头（拆分最后一层）</translation>
    </message>
    <message>
        <source>Pipeline stages (layers split)</source>
        <translation>流水线阶段（拆分各层）</translation>
    </message>
    <message>
        <source>Parameters and gradients in host memory too</source>
        <translation>参数和梯度也放在主机内存中</translation>
    </message>
    <message>
        <source>ZeRO-Infinity style: the device keeps only the unit being computed and the next one, brought over from host memory while the current one runs; implies ZeRO-3 and the optimizer in host memory</source>
        <translation>ZeRO-Infinity 方式：设备上只保留正在计算的单元和下一个单元，下一个单元在当前单元运行时从主机内存送来；隐含 ZeRO-3，优化器也在主机内存中</translation>
    </message>
    <message>
        <source>Pipeline stages × 2 data-parallel replicas</source>
        <translation>流水线阶段 × 2 个数据并行副本</translation>
    </message>
    <message>
        <source>Pipeline stages × 2 replicas, ZeRO-1</source>
        <translation>流水线阶段 × 2 个副本，ZeRO-1</translation>
    </message>
    <message>
        <source>off (train every weight)</source>
        <translation>关闭（训练全部权重）</translation>
    </message>
    <message>
        <source>LoRA rank</source>
        <translation>LoRA 秩</translation>
    </message>
    <message>
        <source>LoRA: train rank-R adapters on every linear layer and transformer projection and freeze the rest of the model (no gradients or optimizer state for it); with initial weights from a trained model this fine-tunes it, and the report gives the test accuracy before and after</source>
        <translation>LoRA：在每个线性层和每个 Transformer 投影上训练秩为 R 的适配器并冻结模型其余部分（没有梯度，也没有优化器状态）；若初始权重来自已训练的模型，这就是对它的微调，报告会给出训练前后的测试准确率</translation>
    </message>
    <message>
        <source>as trained (compute precision)</source>
        <translation>保持原样（计算精度）</translation>
    </message>
    <message>
        <source>int8 (QLoRA, a scale per row)</source>
        <translation>int8（QLoRA，每行一个缩放因子）</translation>
    </message>
    <message>
        <source>int4 (QLoRA, a scale per 64 values)</source>
        <translation>int4（QLoRA，每 64 个值一个缩放因子）</translation>
    </message>
    <message>
        <source>QLoRA: the frozen weight of every projection of the base (adapted or not; not the embeddings, norms or head) is stored quantised while the adapters train, and dequantised each time a layer uses it; the plan shows the smaller parameters and the one dequantised projection in the workspace</source>
        <translation>QLoRA：训练适配器期间，基座中每个投影层的冻结权重（无论是否带适配器；嵌入、归一化层和输出头除外）以量化形式存储，层每次使用时再反量化；计划中可见变小的参数，以及工作区中一个反量化后的投影层</translation>
    </message>
    <message>
        <source>LoRA base</source>
        <translation>LoRA 基座</translation>
    </message>
    <message>
        <source>Set this share of each weight tensor&apos;s smallest values to zero (magnitude pruning) and measure the test accuracy again (a language model&apos;s validation loss); the weights file is not changed</source>
        <translation>把每个权重张量中绝对值最小的这一比例的值置零（幅值剪枝），并再次测量测试准确率（语言模型为验证损失）；权重文件不会被修改</translation>
    </message>
    <message>
        <source>Store the weight tensors at this width and measure the test accuracy again (a language model&apos;s validation loss)</source>
        <translation>以此位宽存储权重张量，并再次测量测试准确率（语言模型为验证损失）</translation>
    </message>
    <message>
        <source>Tensor-parallel head × 2 data-parallel replicas</source>
        <translation>张量并行输出头 × 2 个数据并行副本</translation>
    </message>
    <message>
        <source>Tensor-parallel head × 2 replicas, ZeRO-1</source>
        <translation>张量并行输出头 × 2 个副本，ZeRO-1</translation>
    </message>
    <message>
        <source>How the ranks share the model: data parallel replicates it; ZeRO-1/2/3 split the optimizer state, then the gradients, then the parameters; a tensor-parallel head splits the last layer&apos;s output columns over the ranks, which all train on the whole batch; pipeline stages give each rank consecutive layers, the micro-batches (Gradient accumulation) flowing through them; with 2 data-parallel replicas, the head&apos;s parts or the stages are half as many and run twice, each copy on half the batch</source>
        <translation>各进程如何分担模型：数据并行复制整个模型；ZeRO-1/2/3 依次拆分优化器状态、梯度、参数；张量并行输出头把最后一层的输出列拆分到各进程上，各进程都在整个批次上训练；流水线阶段给每个进程若干连续的层，微批次（梯度累积）依次流经它们；带 2 个数据并行副本时，输出头的部分或流水线阶段减为一半并运行两份，每份处理一半批次</translation>
    </message>
    <message>
        <source>nf4 (QLoRA&apos;s NormalFloat, the scales quantised too)</source>
        <translation>nf4（QLoRA 的 NormalFloat，缩放系数本身也量化）</translation>
    </message>
    <message>
        <source>nf4 (NormalFloat, a scale per 64 values, the scales quantised too)</source>
        <translation>nf4（NormalFloat，每 64 个值一个缩放系数，缩放系数本身也量化）</translation>
    </message>
    <message>
        <source>the rank</source>
        <translation>等于秩</translation>
    </message>
    <message>
        <source>LoRA alpha: the adapters&apos; output is scaled by alpha / rank (peft&apos;s lora_alpha; the rank when not set)</source>
        <translation>LoRA alpha：适配器的输出乘以 alpha / 秩（即 peft 的 lora_alpha；未设置时等于秩）</translation>
    </message>
    <message>
        <source>LoRA alpha</source>
        <translation>LoRA alpha</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>LoRA dropout: while training, each adapter&apos;s input is dropped with this probability (peft&apos;s lora_dropout); the plan counts the dropped input and its mask as workspace</source>
        <translation>LoRA dropout：训练时每个适配器的输入按此概率丢弃（即 peft 的 lora_dropout）；内存计划把丢弃后的输入及其掩码计入工作区</translation>
    </message>
    <message>
        <source>LoRA dropout</source>
        <translation>LoRA dropout</translation>
    </message>
    <message>
        <source>Adapters on the attention&apos;s %1 of every block</source>
        <translation>在每个块注意力的 %1 上加适配器</translation>
    </message>
    <message>
        <source>Adapters on the MLP&apos;s %1 of every block</source>
        <translation>在每个块 MLP 的 %1 上加适配器</translation>
    </message>
    <message>
        <source>The projections of each block that get LoRA adapters (peft&apos;s target_modules); the others stay frozen</source>
        <translation>每个块中加 LoRA 适配器的投影（即 peft 的 target_modules）；其余投影保持冻结</translation>
    </message>
    <message>
        <source>LoRA on</source>
        <translation>LoRA 作用于</translation>
    </message>
</context>
<context>
    <name>hrw::CoreText</name>
    <message>
        <source>, </source>
        <comment>between the parts of a list</comment>
        <translation>，</translation>
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
        <source>Embedding</source>
        <translation>嵌入</translation>
    </message>
    <message>
        <source>Transformer</source>
        <translation>Transformer</translation>
    </message>
    <message>
        <source>Residual block</source>
        <translation>残差块</translation>
    </message>
    <message>
        <source>Token embedding</source>
        <translation>Token 嵌入</translation>
    </message>
    <message>
        <source>Position embedding</source>
        <translation>位置嵌入</translation>
    </message>
    <message>
        <source>Self-attention</source>
        <translation>自注意力</translation>
    </message>
    <message>
        <source>Transformer block</source>
        <translation>Transformer 块</translation>
    </message>
    <message>
        <source>Language-model head</source>
        <translation>语言模型头</translation>
    </message>
    <message>
        <source>Patch embedding</source>
        <translation>图块嵌入</translation>
    </message>
    <message>
        <source>Class token</source>
        <translation>类别 token</translation>
    </message>
    <message>
        <source>Class-token pooling</source>
        <translation>类别 token 池化</translation>
    </message>
    <message>
        <source>Softmax cross-entropy</source>
        <translation>Softmax 交叉熵</translation>
    </message>
    <message>
        <source>Input (length)</source>
        <translation>输入（长度）</translation>
    </message>
    <message>
        <source>Input (T×F)</source>
        <translation>输入（T×F）</translation>
    </message>
    <message>
        <source>LLaMA block</source>
        <translation>LLaMA 块</translation>
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
    <name>hrw::StepTimelineChart</name>
    <message>
        <source>forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>recompute</source>
        <translation>重算</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <source>reduce</source>
        <translation>归约</translation>
    </message>
    <message>
        <source>offload</source>
        <translation>卸载</translation>
    </message>
    <message>
        <source>update</source>
        <translation>更新</translation>
    </message>
    <message>
        <source>send</source>
        <translation>发送</translation>
    </message>
    <message>
        <source>receive</source>
        <translation>接收</translation>
    </message>
    <message>
        <source>gather</source>
        <translation>收集</translation>
    </message>
    <message>
        <source>the start of the step</source>
        <translation>步骤开始</translation>
    </message>
    <message>
        <source>%1, micro-batch %2</source>
        <translation>%1，微批次 %2</translation>
    </message>
    <message>
        <source>%1: %2 live</source>
        <translation>%1：活跃 %2</translation>
    </message>
    <message>
        <source>no timeline</source>
        <translation>无时间线</translation>
    </message>
    <message>
        <source>events of the step, in order</source>
        <translation>该步骤的事件（按顺序）</translation>
    </message>
    <message>
        <source>peak %1</source>
        <translation>峰值 %1</translation>
    </message>
</context>
<context>
    <name>idx.bad_magic</name>
    <message>
        <source>%1: not an IDX %2 file (magic %3, expected %4); is it gzip-compressed twice or a different dataset?</source>
        <translation>%1：不是 IDX %2 文件（魔数 %3，应为 %4）；是被 gzip 压缩了两次，还是另一个数据集？</translation>
    </message>
</context>
<context>
    <name>idx.cannot_open</name>
    <message>
        <source>%1: cannot open (%2); check the file&apos;s permissions</source>
        <translation>%1：无法打开（%2）；请检查文件权限</translation>
    </message>
</context>
<context>
    <name>idx.count_mismatch</name>
    <message>
        <source>%1 holds %2 images but %3 holds %4 labels; they must have the same count: are they from the same dataset and split (train vs t10k)?</source>
        <translation>%1 有 %2 张图像，而 %3 有 %4 个标签；两者数量必须相同：它们是否来自同一个数据集和同一个划分（train 与 t10k）？</translation>
    </message>
</context>
<context>
    <name>idx.empty_images</name>
    <message>
        <source>%1: header says images of %2x%3 pixels; the file is damaged, download it again</source>
        <translation>%1：文件头写的图像尺寸为 %2x%3 像素；文件已损坏，请重新下载</translation>
    </message>
</context>
<context>
    <name>idx.extra_data</name>
    <message>
        <source>%1: header says %2 (%3 bytes) but the file has %4 more bytes after them; the file is damaged or not a plain IDX file, download it again</source>
        <translation>%1：文件头写的是 %2（%3 字节），但文件在其后还多出 %4 字节；文件已损坏或不是普通的 IDX 文件，请重新下载</translation>
    </message>
</context>
<context>
    <name>idx.extra_data_gz</name>
    <message>
        <source>%1: header says %2 (%3 bytes) but it decompresses to %4 more bytes after them; the file is damaged or not a plain IDX file, download it again</source>
        <translation>%1：文件头写的是 %2（%3 字节），但解压后在其后还多出 %4 字节；文件已损坏或不是普通的 IDX 文件，请重新下载</translation>
    </message>
</context>
<context>
    <name>idx.gzip_twice</name>
    <message>
        <source>%1: not an IDX %2 file (magic %3, expected %4); is it gzip-compressed twice or a different dataset? (decompress it once with gunzip)</source>
        <translation>%1：不是 IDX %2 文件（魔数 %3，应为 %4）；是被 gzip 压缩了两次，还是另一个数据集？（用 gunzip 解压一次）</translation>
    </message>
</context>
<context>
    <name>idx.implausible</name>
    <message>
        <source>%1: header says %2, which is implausibly large (at most %3 pixels an image); the file is damaged, download it again</source>
        <translation>%1：文件头写的是 %2，大得不合理（每张图像最多 %3 像素）；文件已损坏，请重新下载</translation>
    </message>
</context>
<context>
    <name>idx.is_directory</name>
    <message>
        <source>%1: is a directory, expected an IDX file</source>
        <translation>%1：是一个目录，应为 IDX 文件</translation>
    </message>
</context>
<context>
    <name>idx.label_range</name>
    <message>
        <source>%1: label %2 at index %3 is out of range (expected 0..%4); the file is damaged or belongs to a dataset with more classes</source>
        <translation>%1：索引 %3 处的标签 %2 超出范围（应为 0..%4）；文件已损坏，或属于类别更多的数据集</translation>
    </message>
</context>
<context>
    <name>idx.no_memory</name>
    <message>
        <source>%1: not enough memory to load it (%2 bytes of data); close other programs or use a machine with more memory</source>
        <translation>%1：内存不足，无法加载（数据 %2 字节）；请关闭其他程序或使用内存更大的机器</translation>
    </message>
</context>
<context>
    <name>idx.not_found</name>
    <message>
        <source>%1: file not found; check the path or download the dataset again</source>
        <translation>%1：找不到文件；请检查路径或重新下载数据集</translation>
    </message>
</context>
<context>
    <name>idx.not_regular</name>
    <message>
        <source>%1: is not a regular file (a device, pipe or socket); point to the IDX file itself</source>
        <translation>%1：不是普通文件（而是设备、管道或套接字）；请指向 IDX 文件本身</translation>
    </message>
</context>
<context>
    <name>idx.not_u8</name>
    <message>
        <source>%1: not an IDX u8 file (magic %2); is it a different dataset or a damaged download?</source>
        <translation>%1：不是 IDX u8 文件（魔数 %2）；是另一个数据集，还是下载已损坏？</translation>
    </message>
</context>
<context>
    <name>idx.other_type</name>
    <message>
        <source>%1: not an IDX %2 file (magic %3, expected %4); it is an IDX file of another element type or dimension count; Headroom reads u8 images (N, H, W) and u8 labels (N)</source>
        <translation>%1：不是 IDX %2 文件（魔数 %3，应为 %4）；它是另一种元素类型或维数的 IDX 文件；Headroom 读取 u8 图像 (N, H, W) 和 u8 标签 (N)</translation>
    </message>
</context>
<context>
    <name>idx.swapped</name>
    <message>
        <source>%1: not an IDX %2 file (magic %3, expected %4); it is an IDX %5 file: are the image and label files swapped?</source>
        <translation>%1：不是 IDX %2 文件（魔数 %3，应为 %4）；它是 IDX %5 文件：图像文件和标签文件是否弄反了？</translation>
    </message>
</context>
<context>
    <name>idx.too_short</name>
    <message>
        <source>%1: too short to be an IDX file (%2 bytes); download it again</source>
        <translation>%1：太短，不可能是 IDX 文件（%2 字节）；请重新下载</translation>
    </message>
</context>
<context>
    <name>idx.truncated_data</name>
    <message>
        <source>%1: truncated: header says %2 (%3 bytes) but the file has %4 bytes; download it again</source>
        <translation>%1：已截断：文件头写的是 %2（%3 字节），但文件只有 %4 字节；请重新下载</translation>
    </message>
</context>
<context>
    <name>idx.truncated_data_gz</name>
    <message>
        <source>%1: truncated: header says %2 (%3 bytes) but it decompresses to %4 bytes; download it again</source>
        <translation>%1：已截断：文件头写的是 %2（%3 字节），但解压后只有 %4 字节；请重新下载</translation>
    </message>
</context>
<context>
    <name>idx.truncated_gzip</name>
    <message>
        <source>%1: truncated: header says %2 (%3 bytes) but it decompresses to %4 bytes and the gzip stream is cut short; download it again</source>
        <translation>%1：已截断：文件头写的是 %2（%3 字节），但解压后只有 %4 字节，且 gzip 流提前结束；请重新下载</translation>
    </message>
</context>
<context>
    <name>idx.truncated_header</name>
    <message>
        <source>%1: truncated header (%2 bytes, expected %3); download it again</source>
        <translation>%1：文件头被截断（%2 字节，应为 %3）；请重新下载</translation>
    </message>
</context>
<context>
    <name>idx.zlib_error</name>
    <message>
        <source>%1: cannot be decompressed (zlib: %2); the download is damaged, download it again</source>
        <translation>%1：无法解压（zlib：%2）；下载已损坏，请重新下载</translation>
    </message>
</context>
<context>
    <name>json.invalid</name>
    <message>
        <source>%1 is not valid JSON: %2</source>
        <translation>%1 不是有效的 JSON：%2</translation>
    </message>
</context>
<context>
    <name>json.too_deep</name>
    <message>
        <source>%1: JSON nested more than %2 levels deep; the file is damaged or not what Headroom writes</source>
        <translation>%1：JSON 嵌套超过 %2 层；文件已损坏，或不是 Headroom 写出的文件</translation>
    </message>
</context>
<context>
    <name>jsonl.bad_array</name>
    <message>
        <source>%1 starts a JSON list but is not valid JSON (near line %2); a .json file must hold one list of rows [{...}, {...}], a .jsonl file one row a line</source>
        <translation>%1 以 JSON 列表开头，但不是有效的 JSON（约在第 %2 行）；.json 文件必须包含一个由各行组成的列表 [{...}, {...}]，.jsonl 文件则每行一条</translation>
    </message>
</context>
<context>
    <name>jsonl.bad_array_plain</name>
    <message>
        <source>%1 starts a JSON list but is not valid JSON; a .json file must hold one list of rows [{...}, {...}], a .jsonl file one row a line</source>
        <translation>%1 以 JSON 列表开头，但不是有效的 JSON；.json 文件必须包含一个由各行组成的列表 [{...}, {...}]，.jsonl 文件则每行一条</translation>
    </message>
</context>
<context>
    <name>jsonl.bad_element</name>
    <message>
        <source>element %1 (line %2) of %3: %4; each row must be {&quot;prompt&quot;, &quot;completion&quot;}, {&quot;messages&quot;: [{&quot;role&quot;, &quot;content&quot;}, ...]}, Alpaca&apos;s {&quot;instruction&quot;, &quot;input&quot;, &quot;output&quot;} or ShareGPT&apos;s {&quot;conversations&quot;: [{&quot;from&quot;, &quot;value&quot;}, ...]}</source>
        <translation>%3 第 %1 个元素（第 %2 行）：%4；每行必须是 {&quot;prompt&quot;, &quot;completion&quot;}、{&quot;messages&quot;: [{&quot;role&quot;, &quot;content&quot;}, ...]}、Alpaca 的 {&quot;instruction&quot;, &quot;input&quot;, &quot;output&quot;} 或 ShareGPT 的 {&quot;conversations&quot;: [{&quot;from&quot;, &quot;value&quot;}, ...]}</translation>
    </message>
</context>
<context>
    <name>jsonl.bad_layout</name>
    <message>
        <source>unknown sequence layout &apos;%1&apos;; use pad or pack (--sequences)</source>
        <translation>未知的序列布局“%1”；请使用 pad 或 pack（--sequences）</translation>
    </message>
</context>
<context>
    <name>jsonl.bad_row</name>
    <message>
        <source>line %1 of %2: %3; each row must be {&quot;prompt&quot;, &quot;completion&quot;}, {&quot;messages&quot;: [{&quot;role&quot;, &quot;content&quot;}, ...]}, Alpaca&apos;s {&quot;instruction&quot;, &quot;input&quot;, &quot;output&quot;} or ShareGPT&apos;s {&quot;conversations&quot;: [{&quot;from&quot;, &quot;value&quot;}, ...]}</source>
        <translation>%2 第 %1 行：%3；每行必须是 {&quot;prompt&quot;, &quot;completion&quot;}、{&quot;messages&quot;: [{&quot;role&quot;, &quot;content&quot;}, ...]}、Alpaca 的 {&quot;instruction&quot;, &quot;input&quot;, &quot;output&quot;} 或 ShareGPT 的 {&quot;conversations&quot;: [{&quot;from&quot;, &quot;value&quot;}, ...]}</translation>
    </message>
</context>
<context>
    <name>jsonl.empty</name>
    <message>
        <source>%1 holds no rows; write one JSON object a line</source>
        <translation>%1 中没有数据行；请每行写一个 JSON 对象</translation>
    </message>
</context>
<context>
    <name>jsonl.mistral_roles</name>
    <message>
        <source>line %1 of %2: message %3 is &apos;%4&apos; but Mistral&apos;s template needs user and assistant turns to alternate, starting with user (a system message only first); fix the row or pick another --chat-template</source>
        <translation>%2 第 %1 行：第 %3 条消息是“%4”，但 Mistral 的模板要求 user 与 assistant 轮流出现、以 user 开始（system 消息只能在最前面）；请修改该行或换一个 --chat-template</translation>
    </message>
</context>
<context>
    <name>jsonl.no_file</name>
    <message>
        <source>JSONL file &apos;%1&apos; not found; pass --data jsonl:FILE</source>
        <translation>找不到 JSONL 文件“%1”；请传入 --data jsonl:FILE</translation>
    </message>
</context>
<context>
    <name>jsonl.no_windows</name>
    <message>
        <source>the %1 rows give no window of %2 tokens (%3 tokens in all); use --sequences pad, a shorter --seq, or more rows</source>
        <translation>%1 数据行凑不出一个 %2 个 token 的窗口（共 %3 个 token）；请使用 --sequences pad、更短的 --seq 或更多数据行</translation>
    </message>
</context>
<context>
    <name>jsonl.not_jsonl</name>
    <message>
        <source>&apos;%1&apos; is not instruction data; use jsonl:FILE</source>
        <translation>“%1”不是指令数据；请使用 jsonl:FILE</translation>
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
    <name>layer.class_token</name>
    <message>
        <source>puts a learned token in front of the sequence</source>
        <translation>在序列前面加一个可学习的 token</translation>
    </message>
</context>
<context>
    <name>layer.class_token.dim</name>
    <message>
        <source>token width</source>
        <translation>token 宽度</translation>
    </message>
</context>
<context>
    <name>layer.class_token_pool</name>
    <message>
        <source>takes the first token&apos;s features for a classifier: (N, T, C) -&gt; (N, C)</source>
        <translation>取第一个 token 的特征送给分类器：(N, T, C) -&gt; (N, C)</translation>
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
        <source>x * Phi(x) (exact erf form, or its tanh approximation)</source>
        <translation>x * Phi(x)（精确 erf 形式，或其 tanh 近似）</translation>
    </message>
</context>
<context>
    <name>layer.gelu.tanh</name>
    <message>
        <source>tanh approximation, as GPT-2 (nn.GELU(approximate=&apos;tanh&apos;))</source>
        <translation>tanh 近似，与 GPT-2 相同（nn.GELU(approximate=&apos;tanh&apos;)）</translation>
    </message>
</context>
<context>
    <name>layer.layernorm</name>
    <message>
        <source>normalises each token over its features</source>
        <translation>对每个 token 在其特征维上做归一化</translation>
    </message>
</context>
<context>
    <name>layer.layernorm.bias</name>
    <message>
        <source>learn an additive bias</source>
        <translation>学习一个加性偏置</translation>
    </message>
</context>
<context>
    <name>layer.layernorm.dim</name>
    <message>
        <source>features (the last dimension)</source>
        <translation>特征数（最后一维）</translation>
    </message>
</context>
<context>
    <name>layer.layernorm.eps</name>
    <message>
        <source>added to the variance</source>
        <translation>加到方差上的小量</translation>
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
    <name>layer.llama_block</name>
    <message>
        <source>x + attention(RMSNorm(x)) with rotary positions and grouped-query heads, then + SwiGLU MLP(RMSNorm(.)): one Llama, Mistral or Qwen2 decoder layer</source>
        <translation>x + 注意力(RMSNorm(x))（旋转位置编码、分组查询注意力头），再 + SwiGLU MLP(RMSNorm(.))：一个 Llama、Mistral 或 Qwen2 解码层</translation>
    </message>
</context>
<context>
    <name>layer.llama_block.dim</name>
    <message>
        <source>model width</source>
        <translation>模型宽度</translation>
    </message>
</context>
<context>
    <name>layer.llama_block.head_dim</name>
    <message>
        <source>head size, even (0: dim / heads)</source>
        <translation>每个头的维度，须为偶数（0：dim / heads）</translation>
    </message>
</context>
<context>
    <name>layer.llama_block.heads</name>
    <message>
        <source>query heads</source>
        <translation>查询头数</translation>
    </message>
</context>
<context>
    <name>layer.llama_block.hidden</name>
    <message>
        <source>SwiGLU MLP hidden width</source>
        <translation>SwiGLU MLP 的隐藏宽度</translation>
    </message>
</context>
<context>
    <name>layer.llama_block.kv_heads</name>
    <message>
        <source>key/value heads, dividing heads (0: as many as heads)</source>
        <translation>键/值头数，须整除查询头数（0：与查询头数相同）</translation>
    </message>
</context>
<context>
    <name>layer.llama_block.max_positions</name>
    <message>
        <source>longest sequence it is built for</source>
        <translation>所支持的最长序列</translation>
    </message>
</context>
<context>
    <name>layer.llama_block.norm_eps</name>
    <message>
        <source>RMSNorm epsilon</source>
        <translation>RMSNorm 的 epsilon</translation>
    </message>
</context>
<context>
    <name>layer.llama_block.qkv_bias</name>
    <message>
        <source>learn biases in the q, k and v projections (Qwen2)</source>
        <translation>在 q、k、v 投影中学习偏置（Qwen2）</translation>
    </message>
</context>
<context>
    <name>layer.llama_block.rope_factor</name>
    <message>
        <source>Llama 3 frequency scaling factor (0: none; &quot;rope_scaling&quot; in JSON)</source>
        <translation>Llama 3 频率缩放因子（0：不缩放；JSON 中为 &quot;rope_scaling&quot;）</translation>
    </message>
</context>
<context>
    <name>layer.llama_block.rope_high_freq_factor</name>
    <message>
        <source>Llama 3 scaling: high_freq_factor</source>
        <translation>Llama 3 缩放：high_freq_factor</translation>
    </message>
</context>
<context>
    <name>layer.llama_block.rope_low_freq_factor</name>
    <message>
        <source>Llama 3 scaling: low_freq_factor</source>
        <translation>Llama 3 缩放：low_freq_factor</translation>
    </message>
</context>
<context>
    <name>layer.llama_block.rope_original_max_positions</name>
    <message>
        <source>Llama 3 scaling: original_max_position_embeddings</source>
        <translation>Llama 3 缩放：original_max_position_embeddings</translation>
    </message>
</context>
<context>
    <name>layer.llama_block.rope_theta</name>
    <message>
        <source>rotary base: frequencies theta^(-2i/D)</source>
        <translation>旋转位置编码的基数：频率为 theta^(-2i/D)</translation>
    </message>
</context>
<context>
    <name>layer.lm_head</name>
    <message>
        <source>scores every vocabulary token at each position: (N, T, dim) -&gt; (N, T, V)</source>
        <translation>为每个位置上的每个词表 token 打分：(N, T, dim) -&gt; (N, T, V)</translation>
    </message>
</context>
<context>
    <name>layer.lm_head.dim</name>
    <message>
        <source>model width</source>
        <translation>模型宽度</translation>
    </message>
</context>
<context>
    <name>layer.lm_head.tied</name>
    <message>
        <source>share the token embedding&apos;s weight (no parameters of its own)</source>
        <translation>共享 token 嵌入的权重（自身没有参数）</translation>
    </message>
</context>
<context>
    <name>layer.lm_head.vocab_size</name>
    <message>
        <source>vocabulary size V</source>
        <translation>词表大小 V</translation>
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
    <name>layer.mlp</name>
    <message>
        <source>linear, GELU, linear: the feed-forward half of a transformer block</source>
        <translation>线性、GELU、线性：Transformer 块中的前馈部分</translation>
    </message>
</context>
<context>
    <name>layer.mlp.bias</name>
    <message>
        <source>learn biases</source>
        <translation>学习偏置</translation>
    </message>
</context>
<context>
    <name>layer.mlp.dim</name>
    <message>
        <source>model width</source>
        <translation>模型宽度</translation>
    </message>
</context>
<context>
    <name>layer.mlp.dropout</name>
    <message>
        <source>drop probability of the output</source>
        <translation>输出的 dropout 概率</translation>
    </message>
</context>
<context>
    <name>layer.mlp.gelu_tanh</name>
    <message>
        <source>GELU in its tanh form (GPT-2); off: exact (ViT)</source>
        <translation>使用 tanh 形式的 GELU（GPT-2）；关闭：精确形式（ViT）</translation>
    </message>
</context>
<context>
    <name>layer.mlp.hidden</name>
    <message>
        <source>hidden width (0: 4 x dim)</source>
        <translation>隐藏层宽度（0：4 x dim）</translation>
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
    <name>layer.patch_embedding</name>
    <message>
        <source>cuts images into square patches and projects each to a token: (N, C, H, W) -&gt; (N, P, dim)</source>
        <translation>把图像切成正方形图块，并把每块投影为一个 token：(N, C, H, W) -&gt; (N, P, dim)</translation>
    </message>
</context>
<context>
    <name>layer.patch_embedding.dim</name>
    <message>
        <source>token width</source>
        <translation>token 宽度</translation>
    </message>
</context>
<context>
    <name>layer.patch_embedding.in_channels</name>
    <message>
        <source>image channels C</source>
        <translation>图像通道数 C</translation>
    </message>
</context>
<context>
    <name>layer.patch_embedding.patch_size</name>
    <message>
        <source>patch side in pixels (divides H and W)</source>
        <translation>图块边长（像素，须整除 H 和 W）</translation>
    </message>
</context>
<context>
    <name>layer.position_embedding</name>
    <message>
        <source>adds a learned vector for each position of the sequence</source>
        <translation>为序列的每个位置加上一个可学习的向量</translation>
    </message>
</context>
<context>
    <name>layer.position_embedding.dim</name>
    <message>
        <source>embedding width</source>
        <translation>嵌入宽度</translation>
    </message>
</context>
<context>
    <name>layer.position_embedding.max_positions</name>
    <message>
        <source>longest sequence it has positions for</source>
        <translation>所支持的最长序列长度</translation>
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
    <name>layer.rmsnorm</name>
    <message>
        <source>scales each token by the reciprocal of its root mean square (LLaMA&apos;s norm)</source>
        <translation>将每个词元除以其均方根再缩放（LLaMA 的归一化）</translation>
    </message>
</context>
<context>
    <name>layer.rmsnorm.dim</name>
    <message>
        <source>features (the last dimension)</source>
        <translation>特征数（最后一维）</translation>
    </message>
</context>
<context>
    <name>layer.rmsnorm.eps</name>
    <message>
        <source>added to the mean square</source>
        <translation>加到均方上的值</translation>
    </message>
</context>
<context>
    <name>layer.self_attention</name>
    <message>
        <source>multi-head self-attention: fused q, k, v projection, scaled dot product, output projection</source>
        <translation>多头自注意力：融合的 q、k、v 投影，缩放点积，输出投影</translation>
    </message>
</context>
<context>
    <name>layer.self_attention.bias</name>
    <message>
        <source>learn biases in the projections</source>
        <translation>在投影中学习偏置</translation>
    </message>
</context>
<context>
    <name>layer.self_attention.causal</name>
    <message>
        <source>each token sees only earlier ones (language models)</source>
        <translation>每个 token 只看到它之前的 token（语言模型）</translation>
    </message>
</context>
<context>
    <name>layer.self_attention.dim</name>
    <message>
        <source>model width (a multiple of heads)</source>
        <translation>模型宽度（须为 heads 的倍数）</translation>
    </message>
</context>
<context>
    <name>layer.self_attention.dropout</name>
    <message>
        <source>drop probability of attention weights and output</source>
        <translation>注意力权重和输出的 dropout 概率</translation>
    </message>
</context>
<context>
    <name>layer.self_attention.heads</name>
    <message>
        <source>attention heads</source>
        <translation>注意力头数</translation>
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
    <name>layer.token_embedding</name>
    <message>
        <source>looks up a learned vector for each token id: (N, T) -&gt; (N, T, dim); must come first</source>
        <translation>为每个 token id 查找一个可学习的向量：(N, T) -&gt; (N, T, dim)；必须位于最前面</translation>
    </message>
</context>
<context>
    <name>layer.token_embedding.dim</name>
    <message>
        <source>embedding width</source>
        <translation>嵌入宽度</translation>
    </message>
</context>
<context>
    <name>layer.token_embedding.vocab_size</name>
    <message>
        <source>vocabulary size V (token ids 0 .. V-1)</source>
        <translation>词表大小 V（token id 为 0 .. V-1）</translation>
    </message>
</context>
<context>
    <name>layer.transformer_block</name>
    <message>
        <source>x + attention(LayerNorm(x)), then + MLP(LayerNorm(.)): one GPT or ViT block</source>
        <translation>x + attention(LayerNorm(x))，再 + MLP(LayerNorm(.))：一个 GPT 或 ViT 块</translation>
    </message>
</context>
<context>
    <name>layer.transformer_block.bias</name>
    <message>
        <source>learn biases in projections and LayerNorms</source>
        <translation>在投影和 LayerNorm 中学习偏置</translation>
    </message>
</context>
<context>
    <name>layer.transformer_block.causal</name>
    <message>
        <source>each token sees only earlier ones (GPT); off for ViT</source>
        <translation>每个 token 只看到它之前的 token（GPT）；ViT 请关闭</translation>
    </message>
</context>
<context>
    <name>layer.transformer_block.dim</name>
    <message>
        <source>model width (a multiple of heads)</source>
        <translation>模型宽度（须为 heads 的倍数）</translation>
    </message>
</context>
<context>
    <name>layer.transformer_block.dropout</name>
    <message>
        <source>drop probability (attention weights and both outputs)</source>
        <translation>dropout 概率（注意力权重和两个输出）</translation>
    </message>
</context>
<context>
    <name>layer.transformer_block.eps</name>
    <message>
        <source>LayerNorm epsilon</source>
        <translation>LayerNorm 的 epsilon</translation>
    </message>
</context>
<context>
    <name>layer.transformer_block.gelu_tanh</name>
    <message>
        <source>GELU in its tanh form (GPT-2); off: exact (ViT)</source>
        <translation>使用 tanh 形式的 GELU（GPT-2）；关闭：精确形式（ViT）</translation>
    </message>
</context>
<context>
    <name>layer.transformer_block.heads</name>
    <message>
        <source>attention heads</source>
        <translation>注意力头数</translation>
    </message>
</context>
<context>
    <name>layer.transformer_block.hidden</name>
    <message>
        <source>MLP hidden width (0: 4 x dim)</source>
        <translation>MLP 隐藏层宽度（0：4 x dim）</translation>
    </message>
</context>
<context>
    <name>layout.d</name>
    <message>
        <source>%1 data-parallel replicas (%2)</source>
        <translation>%1 个数据并行副本（%2）</translation>
    </message>
</context>
<context>
    <name>layout.k</name>
    <message>
        <source>%1 pipeline stages</source>
        <translation>%1 个流水线阶段</translation>
    </message>
</context>
<context>
    <name>layout.kd</name>
    <message>
        <source>%1 pipeline stages x %2 data-parallel replicas (%3)</source>
        <translation>%1 个流水线阶段 × %2 个数据并行副本（%3）</translation>
    </message>
</context>
<context>
    <name>layout.kt</name>
    <message>
        <source>%1 pipeline stages x %2 split-head ranks</source>
        <translation>%1 个流水线阶段 × %2 个拆分输出头进程</translation>
    </message>
</context>
<context>
    <name>layout.ktd</name>
    <message>
        <source>%1 pipeline stages x %2 split-head ranks x %3 data-parallel replicas (%4)</source>
        <translation>%1 个流水线阶段 × %2 个拆分输出头进程 × %3 个数据并行副本（%4）</translation>
    </message>
</context>
<context>
    <name>layout.one</name>
    <message>
        <source>one process</source>
        <translation>单进程</translation>
    </message>
</context>
<context>
    <name>layout.one_sharded</name>
    <message>
        <source>one process (%1)</source>
        <translation>单进程（%1）</translation>
    </message>
</context>
<context>
    <name>layout.t</name>
    <message>
        <source>%1 split-head ranks</source>
        <translation>%1 个拆分输出头进程</translation>
    </message>
</context>
<context>
    <name>layout.td</name>
    <message>
        <source>%1 split-head ranks x %2 data-parallel replicas (%3)</source>
        <translation>%1 个拆分输出头进程 × %2 个数据并行副本（%3）</translation>
    </message>
</context>
<context>
    <name>layout.unknown_choice</name>
    <message>
        <source>unknown layout &apos;%1&apos;</source>
        <translation>未知的布局“%1”</translation>
    </message>
</context>
<context>
    <name>model.lora_no_linear</name>
    <message>
        <source>--lora %1 adds adapters to linear layers and transformer projections, but this model has neither; leave --lora out</source>
        <translation>--lora %1 会给线性层和 Transformer 投影加适配器，但该模型两者都没有；请去掉 --lora</translation>
    </message>
</context>
<context>
    <name>model.tied_head</name>
    <message>
        <source>layer %1 (lm_head) is tied to the token embedding, but the model has no token_embedding of the same vocabulary and width; set tied to false or match vocab_size and dim</source>
        <translation>第 %1 层（lm_head）与 token 嵌入绑定，但模型中没有词表大小和宽度都相同的 token_embedding；请把 tied 设为 false，或使 vocab_size 和 dim 一致</translation>
    </message>
</context>
<context>
    <name>model.token_input</name>
    <message>
        <source>the model takes token ids (N, T) i64 with 1 &lt;= T &lt;= %1, got %2 %3; shorten the sequence or build the model for a longer one</source>
        <translation>模型接受 token id (N, T) i64，且 1 &lt;= T &lt;= %1，得到的是 %2 %3；请缩短序列，或为更长的序列构建模型</translation>
    </message>
</context>
<context>
    <name>model_folder.big_file</name>
    <message>
        <source>%1 is larger than %2 bytes or cannot be read; it is not the file a model folder holds: download it again</source>
        <translation>%1 大于 %2 字节或无法读取；它不是模型文件夹中应有的文件：请重新下载</translation>
    </message>
</context>
<context>
    <name>model_folder.dtype</name>
    <message>
        <source>%1: tensor &apos;%2&apos; is stored as %3, not as floating-point numbers; a model&apos;s weights are f32, bf16 or f16</source>
        <translation>%1：张量“%2”以 %3 存储，不是浮点数；模型的权重应为 f32、bf16 或 f16</translation>
    </message>
</context>
<context>
    <name>model_folder.file_no_config</name>
    <message>
        <source>%1 has no config.json beside it; the weights alone do not say the model: give the config.json the model came with</source>
        <translation>%1 旁边没有 config.json；仅凭权重无法确定模型：请提供模型自带的 config.json</translation>
    </message>
</context>
<context>
    <name>model_folder.missing</name>
    <message>
        <source>%1 does not exist; open a model folder or a .safetensors file</source>
        <translation>%1 不存在；请打开模型文件夹或 .safetensors 文件</translation>
    </message>
</context>
<context>
    <name>model_folder.missing_tensor</name>
    <message>
        <source>%1 has no tensor &apos;%2&apos;, which the model of %3 needs; the weights and the config.json do not belong together: use the config.json that came with them</source>
        <translation>%1 中没有 %3 的模型所需的张量“%2”；权重与 config.json 不匹配：请使用权重自带的 config.json</translation>
    </message>
</context>
<context>
    <name>model_folder.no_config</name>
    <message>
        <source>%1 has no config.json; a Hugging Face model folder holds config.json beside its weights: open the folder the model was downloaded or saved into</source>
        <translation>%1 中没有 config.json；Hugging Face 模型文件夹在权重旁有 config.json：请打开模型下载或保存到的文件夹</translation>
    </message>
</context>
<context>
    <name>model_folder.no_weights</name>
    <message>
        <source>%1 has a config.json but no weights (model.safetensors, or shards with model.safetensors.index.json); to plan the model without weights use Model &gt; From a Hugging Face config</source>
        <translation>%1 有 config.json 但没有权重（model.safetensors，或带 model.safetensors.index.json 的分片）；要在没有权重时规划模型，请用“模型 &gt; 从 Hugging Face 配置”</translation>
    </message>
</context>
<context>
    <name>model_folder.not_weights</name>
    <message>
        <source>%1 is not a .safetensors file or a model folder; open a Hugging Face model folder (config.json and its weights), a .safetensors file or a peft adapter folder</source>
        <translation>%1 不是 .safetensors 文件或模型文件夹；请打开 Hugging Face 模型文件夹（config.json 及其权重）、.safetensors 文件或 peft 适配器文件夹</translation>
    </message>
</context>
<context>
    <name>model_folder.peft_base</name>
    <message>
        <source>the adapter in %1 was trained on &apos;%2&apos; (base_model_name_or_path), which is not a model folder here; choose the base model&apos;s folder (--init-base DIR)</source>
        <translation>%1 中的适配器是在“%2”（base_model_name_or_path）上训练的，它在本机不是模型文件夹；请选择基础模型的文件夹（--init-base DIR）</translation>
    </message>
</context>
<context>
    <name>model_folder.run_folder</name>
    <message>
        <source>%1 is a Headroom run folder; start from its weights with Fine-tune from this run in the Runs tab</source>
        <translation>%1 是 Headroom 运行文件夹；请在“运行”标签页中用“从此运行微调”从其权重开始</translation>
    </message>
</context>
<context>
    <name>model_folder.shape</name>
    <message>
        <source>%1: tensor &apos;%2&apos; has shape %3 but the model of %4 needs %5; the weights and the config.json do not belong together: use the config.json that came with them</source>
        <translation>%1：张量“%2”的形状为 %3，但 %4 的模型需要 %5；权重与 config.json 不匹配：请使用权重自带的 config.json</translation>
    </message>
</context>
<context>
    <name>model_folder.unexpected_tensor</name>
    <message>
        <source>%1 holds tensor &apos;%2&apos;, which the model of %3 does not have; the weights and the config.json do not belong together: use the config.json that came with them</source>
        <translation>%1 含有张量“%2”，而 %3 的模型没有它；权重与 config.json 不匹配：请使用权重自带的 config.json</translation>
    </message>
</context>
<context>
    <name>onnx.data</name>
    <message>
        <source>the graph takes the normalisation of the run&apos;s data &apos;%1&apos; (%2), which does not load: %3</source>
        <translation>计算图需要该运行数据“%1”（%2）的归一化参数，但该数据无法加载：%3</translation>
    </message>
</context>
<context>
    <name>onnx.data_shape</name>
    <message>
        <source>the run&apos;s data &apos;%1&apos; has samples of shape %2 but the model takes %3</source>
        <translation>该运行的数据“%1”的样本形状为 %2，但模型接受 %3</translation>
    </message>
</context>
<context>
    <name>onnx.extension</name>
    <message>
        <source>%1 does not end in .onnx; give an ONNX file name (FILE.onnx), so that no other file is replaced by mistake</source>
        <translation>%1 不以 .onnx 结尾；请给出 ONNX 文件名（FILE.onnx），以免误将其他文件替换</translation>
    </message>
</context>
<context>
    <name>onnx.file_is_folder</name>
    <message>
        <source>%1 is a folder; give a file name in it, such as %2</source>
        <translation>%1 是一个文件夹；请给出其中的文件名，例如 %2</translation>
    </message>
</context>
<context>
    <name>onnx.folder_is_file</name>
    <message>
        <source>%1 is a file, not a folder; give the ONNX file in a folder</source>
        <translation>%1 是文件而不是文件夹；请把 ONNX 文件放在一个文件夹中</translation>
    </message>
</context>
<context>
    <name>onnx.language_model</name>
    <message>
        <source>&apos;%1&apos; is a language model: ONNX export covers image and table models; write a language model as a Hugging Face model folder (headroom export RUN --hf DIR) or as a GGUF file for llama.cpp (headroom export RUN --gguf FILE)</source>
        <translation>“%1”是语言模型：ONNX 导出只支持图像和表格模型；请将语言模型写为 Hugging Face 模型文件夹（headroom export RUN --hf DIR）或供 llama.cpp 使用的 GGUF 文件（headroom export RUN --gguf FILE）</translation>
    </message>
</context>
<context>
    <name>onnx.no_config</name>
    <message>
        <source>%1 is not in a run folder (no config.json beside it): ONNX export needs the run&apos;s data for the input&apos;s normalisation</source>
        <translation>%1 不在运行文件夹中（旁边没有 config.json）：ONNX 导出需要该运行的数据来确定输入的归一化</translation>
    </message>
</context>
<context>
    <name>onnx.no_file</name>
    <message>
        <source>give the ONNX file to write (--onnx FILE)</source>
        <translation>请给出要写入的 ONNX 文件（--onnx FILE）</translation>
    </message>
</context>
<context>
    <name>onnx.no_folder</name>
    <message>
        <source>the folder %1 does not exist; create it or give a file in another folder</source>
        <translation>文件夹 %1 不存在；请先创建它，或给出另一个文件夹中的文件</translation>
    </message>
</context>
<context>
    <name>onnx.no_mapping</name>
    <message>
        <source>layer %1 (%2) has no ONNX mapping; ONNX export covers %3</source>
        <translation>第 %1 层（%2）没有 ONNX 映射；ONNX 导出支持 %3</translation>
    </message>
</context>
<context>
    <name>onnx.no_run</name>
    <message>
        <source>%1 does not exist; give a run folder or the model.safetensors inside one</source>
        <translation>%1 不存在；请给出运行文件夹或其中的 model.safetensors</translation>
    </message>
</context>
<context>
    <name>onnx.no_weights</name>
    <message>
        <source>%1 holds no model.safetensors; give a finished run&apos;s folder</source>
        <translation>%1 中没有 model.safetensors；请给出已完成运行的文件夹</translation>
    </message>
</context>
<context>
    <name>onnx.too_large</name>
    <message>
        <source>&apos;%1&apos; is too large for one ONNX file (2 GiB: protobuf&apos;s limit)</source>
        <translation>“%1”太大，无法写入单个 ONNX 文件（2 GiB：protobuf 的上限）</translation>
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
    <name>optim.decay_scope</name>
    <message>
        <source>unknown weight-decay scope &apos;%1&apos;; use auto, all or matrices</source>
        <translation>未知的权重衰减范围“%1”；请使用 auto、all 或 matrices</translation>
    </message>
</context>
<context>
    <name>optim.grad_clip</name>
    <message>
        <source>gradient clipping must be 0 (off) or a positive norm (--grad-clip)</source>
        <translation>梯度裁剪必须为 0（关闭）或正的范数（--grad-clip）</translation>
    </message>
</context>
<context>
    <name>peft.field</name>
    <message>
        <source>%1: &quot;%2&quot; must be %3, got %4; the adapter_config.json is not a peft LoRA adapter&apos;s</source>
        <translation>%1：&quot;%2&quot; 必须是 %3，实际为 %4；该 adapter_config.json 不是 peft LoRA 适配器的配置</translation>
    </message>
</context>
<context>
    <name>peft.name</name>
    <message>
        <source>%1: tensor &apos;%2&apos; is not a peft LoRA adapter&apos;s (base_model.model.NAME.lora_A.weight or .lora_B.weight)</source>
        <translation>%1：张量“%2”不是 peft LoRA 适配器的张量（base_model.model.NAME.lora_A.weight 或 .lora_B.weight）</translation>
    </message>
</context>
<context>
    <name>peft.shape</name>
    <message>
        <source>%1: tensor &apos;%2&apos; has shape %3, which does not have rank r = %4 of adapter_config.json; the adapter&apos;s files do not belong together</source>
        <translation>%1：张量“%2”的形状为 %3，与 adapter_config.json 中的秩 r = %4 不符；适配器的文件不配套</translation>
    </message>
</context>
<context>
    <name>peft.type</name>
    <message>
        <source>%1: peft_type %2 is not LORA; Headroom reads LoRA adapters only</source>
        <translation>%1：peft_type %2 不是 LORA；Headroom 只读取 LoRA 适配器</translation>
    </message>
</context>
<context>
    <name>peft_export.folder</name>
    <message>
        <source>cannot create the folder %1 (%2); choose a folder you can write to</source>
        <translation>无法创建文件夹 %1（%2）；请选择一个可写的文件夹</translation>
    </message>
</context>
<context>
    <name>peft_export.no_weights</name>
    <message>
        <source>%1 holds no model.safetensors; pass the folder of a finished run (headroom train --out DIR)</source>
        <translation>%1 中没有 model.safetensors；请给出一次已完成运行的文件夹（headroom train --out DIR）</translation>
    </message>
</context>
<context>
    <name>peft_export.not_llama</name>
    <message>
        <source>%1 holds model &apos;%2&apos;, which is not in the LLaMA layout; peft&apos;s adapter names are the LLaMA family&apos;s (q_proj, v_proj, ...), so only those models&apos; adapters can be written</source>
        <translation>%1 中的模型“%2”不是 LLaMA 布局；peft 的适配器名称属于 LLaMA 系列（q_proj、v_proj 等），因此只能写出这类模型的适配器</translation>
    </message>
</context>
<context>
    <name>peft_export.not_lora</name>
    <message>
        <source>%1 is not a LoRA run: it has no adapters to write as a peft adapter; export its whole model as a Hugging Face folder instead (export --hf DIR)</source>
        <translation>%1 不是 LoRA 运行：没有可写成 peft 适配器的适配器；请改为把整个模型导出为 Hugging Face 文件夹（export --hf DIR）</translation>
    </message>
</context>
<context>
    <name>pipeline.split_count</name>
    <message>
        <source>--pipeline-split lists %1 stages but --pipeline is %2; give one layer count per stage</source>
        <translation>--pipeline-split 列出了 %1 个阶段，但 --pipeline 为 %2；请为每个阶段给出一个层数</translation>
    </message>
</context>
<context>
    <name>pipeline.split_empty</name>
    <message>
        <source>--pipeline-split: every stage needs at least one layer</source>
        <translation>--pipeline-split：每个阶段至少需要一层</translation>
    </message>
</context>
<context>
    <name>pipeline.split_sum</name>
    <message>
        <source>--pipeline-split adds up to %1 layers but the model has %2 top-level layers; make them agree</source>
        <translation>--pipeline-split 的总和为 %1 层，但模型有 %2 个顶层层；请使两者一致</translation>
    </message>
</context>
<context>
    <name>pipeline.too_many_stages</name>
    <message>
        <source>--pipeline %1: the model has %2 top-level layers, fewer than the stages; use at most %2 stages</source>
        <translation>--pipeline %1：模型只有 %2 个顶层层，少于阶段数；最多使用 %2 个阶段</translation>
    </message>
</context>
<context>
    <name>plan.bad_rank</name>
    <message>
        <source>rank %1 does not exist with %2 ranks (0..%3)</source>
        <translation>共 %2 个 rank（0..%3）时不存在 rank %1</translation>
    </message>
</context>
<context>
    <name>plan.bad_ranks</name>
    <message>
        <source>the number of ranks must be at least 1 (--ranks)</source>
        <translation>rank 数至少为 1（--ranks）</translation>
    </message>
</context>
<context>
    <name>plan.device_here</name>
    <message>
        <source>%1 on this machine (%2)</source>
        <translation>本机上的 %1（%2）</translation>
    </message>
</context>
<context>
    <name>plan.needs_gpus</name>
    <message>
        <source>needs %1 GPUs: with --ranks %1 %2, each GPU needs %3 (budget %4)</source>
        <translation>需要 %1 块 GPU：使用 --ranks %1 %2 时，每块 GPU 需要 %3（预算 %4）</translation>
    </message>
</context>
<context>
    <name>plan.needs_ranks</name>
    <message>
        <source>needs %1 ranks: with --ranks %1 %2, each rank needs %3 (budget %4)</source>
        <translation>需要 %1 个 rank：使用 --ranks %1 %2 时，每个 rank 需要 %3（预算 %4）</translation>
    </message>
</context>
<context>
    <name>plan.size_too_large</name>
    <message>
        <source>the size &apos;%1&apos; is larger than 1 EiB; write a size such as 4GiB</source>
        <translation>大小“%1”超过 1 EiB；请写成 4GiB 这样的大小</translation>
    </message>
</context>
<context>
    <name>plan.size_too_small</name>
    <message>
        <source>the size &apos;%1&apos; is less than one byte; write a size such as 512MiB</source>
        <translation>大小“%1”不足 1 字节；请写成 512MiB 这样的大小</translation>
    </message>
</context>
<context>
    <name>plan.size_unreadable</name>
    <message>
        <source>cannot read the size &apos;%1&apos;; write it like 4GiB, 512MiB, 1.5GB or 4096 (bytes)</source>
        <translation>无法读取大小“%1”；请写成 4GiB、512MiB、1.5GB 或 4096（字节）这样的形式</translation>
    </message>
</context>
<context>
    <name>resume.already_done</name>
    <message>
        <source>the run in %1 has already trained %2 steps, and the length asked for is %3 steps; give a longer --steps or --epochs to continue it</source>
        <translation>%1 中的运行已经训练了 %2 步，而要求的长度是 %3 步；要继续它，请给出更大的 --steps 或 --epochs</translation>
    </message>
</context>
<context>
    <name>resume.bad_field</name>
    <message>
        <source>%1: field &apos;%2&apos; is missing or out of range; the checkpoint is damaged: resume from the one before it (delete this one) or start the run again</source>
        <translation>%1：字段“%2”缺失或超出范围；该检查点已损坏：请从它之前的检查点继续（删除这一个），或重新开始该运行</translation>
    </message>
</context>
<context>
    <name>resume.cannot_read</name>
    <message>
        <source>cannot read %1; check that the run folder is complete</source>
        <translation>无法读取 %1；请检查运行文件夹是否完整</translation>
    </message>
</context>
<context>
    <name>resume.checkpoint_json</name>
    <message>
        <source>%1 is not valid JSON (%2); the checkpoint is damaged</source>
        <translation>%1 不是有效的 JSON（%2）；该检查点已损坏</translation>
    </message>
</context>
<context>
    <name>resume.config_json</name>
    <message>
        <source>%1 is not valid JSON (%2); the run folder is damaged</source>
        <translation>%1 不是有效的 JSON（%2）；该运行文件夹已损坏</translation>
    </message>
</context>
<context>
    <name>resume.missing_tensor</name>
    <message>
        <source>%1: tensor &apos;%2&apos; is missing; the checkpoint was written for another configuration (optimizer or precision) than the run&apos;s config.json</source>
        <translation>%1：缺少张量“%2”；该检查点是为与运行的 config.json 不同的配置（优化器或精度）写出的</translation>
    </message>
</context>
<context>
    <name>resume.newer_version</name>
    <message>
        <source>%1 was written by a newer Headroom (checkpoint version %2); resume it with that version</source>
        <translation>%1 由更新版本的 Headroom 写出（检查点版本 %2）；请用该版本继续它</translation>
    </message>
</context>
<context>
    <name>resume.no_checkpoint</name>
    <message>
        <source>%1 holds no checkpoint (checkpoint-STEP.json), so there is nothing to resume; the run ended before its first checkpoint (--save-every): start it again</source>
        <translation>%1 中没有检查点（checkpoint-STEP.json），因此无法继续；该运行在第一个检查点（--save-every）之前就结束了：请重新开始它</translation>
    </message>
</context>
<context>
    <name>resume.no_config</name>
    <message>
        <source>%1 has no config.json, so it is not a Headroom run folder (or was written before runs could be resumed); give the folder a run was trained into (--out)</source>
        <translation>%1 中没有 config.json，因此它不是 Headroom 的运行文件夹（或是在支持继续运行之前写出的）；请给出训练时写入的文件夹（--out）</translation>
    </message>
</context>
<context>
    <name>resume.no_tokenizer</name>
    <message>
        <source>%1 is missing, so the run in %2 cannot go on with the same tokens; the folder was written by an older Headroom or changed: start the run again</source>
        <translation>缺少 %1，因此 %2 中的运行无法用相同的 token 继续；该文件夹由旧版 Headroom 写入或已被改动：请重新开始该运行</translation>
    </message>
</context>
<context>
    <name>resume.rank0_refused</name>
    <message>
        <source>rank 0 could not resume the run from its folder; its message says why</source>
        <translation>rank 0 无法从运行文件夹恢复该运行；原因见它的消息</translation>
    </message>
</context>
<context>
    <name>resume.save_every</name>
    <message>
        <source>--save-every expects a number of steps (500) or of minutes (10m) or seconds (30s), got &apos;%1&apos;</source>
        <translation>--save-every 需要步数（500）、分钟数（10m）或秒数（30s），得到的是“%1”</translation>
    </message>
</context>
<context>
    <name>resume.seed</name>
    <message>
        <source>%1 was written with seed %2 but the run&apos;s config.json has seed %3; the folder is inconsistent: start the run again</source>
        <translation>%1 写入时的种子为 %2，但运行的 config.json 中种子为 %3；该文件夹前后不一致：请重新开始该运行</translation>
    </message>
</context>
<context>
    <name>resume.tensor_mismatch</name>
    <message>
        <source>%1: tensor &apos;%2&apos; is %3 %4 but the run needs %5 %6; the checkpoint was written for another configuration than the run&apos;s config.json</source>
        <translation>%1：张量“%2”为 %3 %4，但运行需要 %5 %6；该检查点是为与运行的 config.json 不同的配置写出的</translation>
    </message>
</context>
<context>
    <name>resume.unexpected_tensor</name>
    <message>
        <source>%1: unexpected tensor &apos;%2&apos;; the checkpoint was written for another configuration (optimizer or precision) than the run&apos;s config.json</source>
        <translation>%1：意外的张量“%2”；该检查点是为与运行的 config.json 不同的配置（优化器或精度）写出的</translation>
    </message>
</context>
<context>
    <name>run.checkpoint_auto</name>
    <message>
        <source>checkpoint auto: the planner chose %1 block(s)</source>
        <translation>checkpoint auto：规划器选择了 %1 个块</translation>
    </message>
</context>
<context>
    <name>run.corpus</name>
    <message>
        <source>%1 from %2: %3 training and %4 validation tokens (%5 tokenizer, %6 tokens) in %7 s</source>
        <translation>%1 来自 %2：%3 个训练词元和 %4 个验证词元（%5 分词器，%6 个词元），用时 %7 秒</translation>
    </message>
</context>
<context>
    <name>run.cosine_length</name>
    <message>
        <source>the cosine learning-rate schedule depends on the run&apos;s length: with %1 steps instead of %2 it changes from step %3 on</source>
        <translation>余弦学习率调度取决于训练长度：现在是 %1 步而不是 %2 步，从第 %3 步起学习率会改变</translation>
    </message>
</context>
<context>
    <name>run.device_step</name>
    <message>
        <source>the step runs on the device without waiting for it (its figures arrive up to %1 steps later)</source>
        <translation>训练步在设备上运行，主机无需等待（其数据最多晚 %1 步到达）</translation>
    </message>
</context>
<context>
    <name>run.device_step_graph</name>
    <message>
        <source>the step runs on the device without waiting for it (its figures arrive up to %1 steps later); a full step is captured as a CUDA graph</source>
        <translation>训练步在设备上运行，主机无需等待（其数据最多晚 %1 步到达）；完整的一步被捕获为 CUDA graph</translation>
    </message>
</context>
<context>
    <name>run.epoch</name>
    <message>
        <source>epoch %1: train loss %2</source>
        <translation>第 %1 轮：训练损失 %2</translation>
    </message>
</context>
<context>
    <name>run.epoch_tested</name>
    <message>
        <source>epoch %1: train loss %2, test accuracy %3</source>
        <translation>第 %1 轮：训练损失 %2，测试准确率 %3</translation>
    </message>
</context>
<context>
    <name>run.init_from</name>
    <message>
        <source>initial weights from %1</source>
        <translation>初始权重来自 %1</translation>
    </message>
</context>
<context>
    <name>run.instruction_layout</name>
    <message>
        <source>%1: one row a line in the %2 layout (detected from the first row)</source>
        <translation>%1：每行一条，%2 格式（由第一行识别）</translation>
    </message>
</context>
<context>
    <name>run.instruction_layout_array</name>
    <message>
        <source>%1: a JSON array of rows in the %2 layout (detected from the first row)</source>
        <translation>%1：JSON 数组，各行为 %2 格式（由第一行识别）</translation>
    </message>
</context>
<context>
    <name>run.instructions</name>
    <message>
        <source>%1: %2 training and %3 validation rows, %4 chat template, %5 sequences: %6 training windows of %7 tokens, loss on %8 of %9 tokens (%10 tokenizer); %11 rows cut at the sequence length</source>
        <translation>%1：%2 行训练、%3 行验证，%4 对话模板，%5 序列：%6 个 %7 token 的训练窗口，损失计算于 %9 个 token 中的 %8 个（%10 分词器）；%11 行在序列长度处被截断</translation>
    </message>
</context>
<context>
    <name>run.nccl_memory</name>
    <message>
        <source>%1 holds %2 of this rank&apos;s device memory outside the ledger (its buffers and kernels, measured around its start); plans of %3 ranks on this GPU count it from now on</source>
        <translation>%1 在账本之外占用本 rank 的设备内存 %2（其缓冲区与内核，在其启动前后测得）；今后在此 GPU 上 %3 个 rank 的规划都会计入它</translation>
    </message>
</context>
<context>
    <name>run.resume_one_process</name>
    <message>
        <source>the checkpoint was written on %1 ranks; it goes on as one process</source>
        <translation>检查点是在 %1 个 rank 上写入的；现在以单进程继续</translation>
    </message>
</context>
<context>
    <name>run.resume_other_ranks</name>
    <message>
        <source>the checkpoint was written on %1 rank(s); it goes on on %2</source>
        <translation>检查点是在 %1 个 rank 上写入的；现在在 %2 个 rank 上继续</translation>
    </message>
</context>
<context>
    <name>run.resuming</name>
    <message>
        <source>resuming from %1: step %2 of %3 (epoch %4)</source>
        <translation>从 %1 继续：第 %2 步，共 %3 步（第 %4 轮）</translation>
    </message>
</context>
<context>
    <name>run.stopped</name>
    <message>
        <source>training was stopped</source>
        <translation>训练已停止</translation>
    </message>
</context>
<context>
    <name>run.stopped_at</name>
    <message>
        <source>stopped at step %1</source>
        <translation>在第 %1 步停止</translation>
    </message>
</context>
<context>
    <name>run.test_loss</name>
    <message>
        <source>step %1: test loss %2, accuracy %3 over %4 samples</source>
        <translation>第 %1 步：测试损失 %2，准确率 %3（%4 个样本）</translation>
    </message>
</context>
<context>
    <name>run.tf32_on_cpu</name>
    <message>
        <source>precision tf32 applies to GPU matrix units; on the CPU it computes in fp32</source>
        <translation>tf32 精度适用于 GPU 的矩阵单元；在 CPU 上按 fp32 计算</translation>
    </message>
</context>
<context>
    <name>run.training</name>
    <message>
        <source>training %1 (%2 parameters) on %3: %4, %5 steps (%6 per epoch), %7</source>
        <translation>训练 %1（%2 个参数），设备 %3：%4，%5 步（每轮 %6 步），%7</translation>
    </message>
</context>
<context>
    <name>run.validation_loss</name>
    <message>
        <source>step %1: validation loss %2 per token over %3 tokens</source>
        <translation>第 %1 步：验证损失 %2（每词元，共 %3 个词元）</translation>
    </message>
</context>
<context>
    <name>safetensors.bad_entry</name>
    <message>
        <source>%1: tensor &apos;%2&apos;: %3; the file is damaged or not a safetensors file</source>
        <translation>%1：张量“%2”：%3；文件已损坏或不是 safetensors 文件</translation>
    </message>
</context>
<context>
    <name>safetensors.cannot_map</name>
    <message>
        <source>%1: cannot be memory-mapped (%2)</source>
        <translation>%1：无法内存映射（%2）</translation>
    </message>
</context>
<context>
    <name>safetensors.cannot_open</name>
    <message>
        <source>%1: cannot open (%2); check its permissions</source>
        <translation>%1：无法打开（%2）；请检查其权限</translation>
    </message>
</context>
<context>
    <name>safetensors.dtype</name>
    <message>
        <source>%1: tensor &apos;%2&apos;: unknown or unsupported dtype &apos;%3&apos;; Headroom reads %4</source>
        <translation>%1：张量“%2”：未知或不支持的 dtype“%3”；Headroom 读取 %4</translation>
    </message>
</context>
<context>
    <name>safetensors.duplicate</name>
    <message>
        <source>%1: tensor name &apos;%2&apos; appears twice in the header; the file is damaged or not a safetensors file</source>
        <translation>%1：张量名“%2”在文件头中出现了两次；文件已损坏或不是 safetensors 文件</translation>
    </message>
</context>
<context>
    <name>safetensors.header_deep</name>
    <message>
        <source>%1: header JSON is nested more than %2 levels deep (a safetensors header has 3); the file is damaged or not a safetensors file</source>
        <translation>%1：文件头 JSON 嵌套超过 %2 层（safetensors 文件头只有 3 层）；文件已损坏或不是 safetensors 文件</translation>
    </message>
</context>
<context>
    <name>safetensors.header_json</name>
    <message>
        <source>%1: header is not valid JSON (%2); the file is damaged or not a safetensors file</source>
        <translation>%1：文件头不是有效的 JSON（%2）；文件已损坏或不是 safetensors 文件</translation>
    </message>
</context>
<context>
    <name>safetensors.header_limit</name>
    <message>
        <source>%1: header length %2 bytes exceeds the 100 MB limit; the file is damaged or not a safetensors file</source>
        <translation>%1：文件头长度 %2 字节超过 100 MB 的上限；文件已损坏或不是 safetensors 文件</translation>
    </message>
</context>
<context>
    <name>safetensors.header_not_object</name>
    <message>
        <source>%1: header is not a JSON object; the file is damaged or not a safetensors file</source>
        <translation>%1：文件头不是 JSON 对象；文件已损坏或不是 safetensors 文件</translation>
    </message>
</context>
<context>
    <name>safetensors.header_past_end</name>
    <message>
        <source>%1: header length %2 bytes is larger than the file (%3 bytes); the file is truncated or not a safetensors file</source>
        <translation>%1：文件头长度 %2 字节大于文件本身（%3 字节）；文件被截断或不是 safetensors 文件</translation>
    </message>
</context>
<context>
    <name>safetensors.header_unreadable</name>
    <message>
        <source>%1: cannot read the header (%2)</source>
        <translation>%1：无法读取文件头（%2）</translation>
    </message>
</context>
<context>
    <name>safetensors.hole</name>
    <message>
        <source>%1: hole of %2 bytes in the data buffer before tensor &apos;%3&apos; (data_offsets %4); the file is damaged or not a safetensors file</source>
        <translation>%1：数据缓冲区在张量“%3”之前有 %2 字节的空洞（data_offsets %4）；文件已损坏或不是 safetensors 文件</translation>
    </message>
</context>
<context>
    <name>safetensors.is_folder</name>
    <message>
        <source>%1: is a folder, expected a .safetensors file</source>
        <translation>%1：是一个文件夹，应为 .safetensors 文件</translation>
    </message>
</context>
<context>
    <name>safetensors.metadata_not_object</name>
    <message>
        <source>%1: &quot;__metadata__&quot; must be an object of strings; the file is damaged or not a safetensors file</source>
        <translation>%1：&quot;__metadata__&quot; 必须是由字符串组成的对象；文件已损坏或不是 safetensors 文件</translation>
    </message>
</context>
<context>
    <name>safetensors.metadata_not_string</name>
    <message>
        <source>%1: &quot;__metadata__&quot; entry &apos;%2&apos; is not a string; the file is damaged or not a safetensors file</source>
        <translation>%1：&quot;__metadata__&quot; 的条目“%2”不是字符串；文件已损坏或不是 safetensors 文件</translation>
    </message>
</context>
<context>
    <name>safetensors.no_size</name>
    <message>
        <source>%1: cannot tell its size; is it a regular file?</source>
        <translation>%1：无法获知其大小；它是普通文件吗？</translation>
    </message>
</context>
<context>
    <name>safetensors.not_found</name>
    <message>
        <source>%1: file not found; check the path</source>
        <translation>%1：找不到文件；请检查路径</translation>
    </message>
</context>
<context>
    <name>safetensors.not_regular</name>
    <message>
        <source>%1: is not a regular file (a device, pipe or socket); point to the .safetensors file itself</source>
        <translation>%1：不是普通文件（而是设备、管道或套接字）；请指向 .safetensors 文件本身</translation>
    </message>
</context>
<context>
    <name>safetensors.offsets_range</name>
    <message>
        <source>%1: tensor &apos;%2&apos;: data_offsets %3 are out of range: the data buffer has %4 bytes; the file is truncated or damaged</source>
        <translation>%1：张量“%2”：data_offsets %3 超出范围：数据缓冲区只有 %4 字节；文件被截断或已损坏</translation>
    </message>
</context>
<context>
    <name>safetensors.overlap</name>
    <message>
        <source>%1: tensor &apos;%2&apos; data_offsets %3 overlap tensor &apos;%4&apos;; the file is damaged or not a safetensors file</source>
        <translation>%1：张量“%2”的 data_offsets %3 与张量“%4”重叠；文件已损坏或不是 safetensors 文件</translation>
    </message>
</context>
<context>
    <name>safetensors.tensor_unreadable</name>
    <message>
        <source>%1: cannot read tensor &apos;%2&apos; (%3)</source>
        <translation>%1：无法读取张量“%2”（%3）</translation>
    </message>
</context>
<context>
    <name>safetensors.too_short</name>
    <message>
        <source>%1: too short to be a safetensors file (%2 bytes, the 8-byte header length alone needs 8); the file is damaged or not a safetensors file</source>
        <translation>%1：太短，不可能是 safetensors 文件（%2 字节，仅 8 字节的文件头长度就需要 8 字节）；文件已损坏或不是 safetensors 文件</translation>
    </message>
</context>
<context>
    <name>safetensors.trailing</name>
    <message>
        <source>%1: the data buffer has %2 bytes after the last tensor that no tensor uses (a hole at the end); the file is damaged or not a safetensors file</source>
        <translation>%1：数据缓冲区在最后一个张量之后还有 %2 字节未被任何张量使用（末尾有空洞）；文件已损坏或不是 safetensors 文件</translation>
    </message>
</context>
<context>
    <name>shape.overflow</name>
    <message>
        <source>shape %1 has more elements than a 64-bit count holds; make its dimensions smaller</source>
        <translation>形状 %1 的元素数超出了 64 位计数的范围；请减小其各维大小</translation>
    </message>
</context>
<context>
    <name>spec.activation_limit</name>
    <message>
        <source>layer %1 (%2): with it the model keeps more than %3 bytes of activations per sample (see docs/model-spec.md, Limits)</source>
        <translation>第 %1 层（%2）：加上这一层后，模型每个样本保存的激活超过 %3 字节（见 docs/model-spec.md 的“Limits”一节）</translation>
    </message>
</context>
<context>
    <name>spec.attr_none</name>
    <message>
        <source>%1: unknown attribute &apos;%2&apos;; this layer takes no attributes</source>
        <translation>%1：未知属性“%2”；此层不接受任何属性</translation>
    </message>
</context>
<context>
    <name>spec.attr_not_bool</name>
    <message>
        <source>%1: attribute &apos;%2&apos; must be true or false, got %3</source>
        <translation>%1：属性“%2”必须为 true 或 false，得到的是 %3</translation>
    </message>
</context>
<context>
    <name>spec.attr_not_integer</name>
    <message>
        <source>%1: attribute &apos;%2&apos; must be an integer, got %3</source>
        <translation>%1：属性“%2”必须是整数，得到的是 %3</translation>
    </message>
</context>
<context>
    <name>spec.attr_not_number</name>
    <message>
        <source>%1: attribute &apos;%2&apos; must be a number, got %3</source>
        <translation>%1：属性“%2”必须是数字，得到的是 %3</translation>
    </message>
</context>
<context>
    <name>spec.attr_out_of_range</name>
    <message>
        <source>layer %1 (%2): attribute &apos;%3&apos; must be between %4 and %5, got %6</source>
        <translation>第 %1 层（%2）：属性“%3”必须在 %4 到 %5 之间，得到的是 %6</translation>
    </message>
</context>
<context>
    <name>spec.attr_range</name>
    <message>
        <source>%1: attribute &apos;%2&apos; must be between %3 and %4, got %5</source>
        <translation>%1：属性“%2”必须在 %3 到 %4 之间，得到的是 %5</translation>
    </message>
</context>
<context>
    <name>spec.attr_unknown</name>
    <message>
        <source>%1: unknown attribute &apos;%2&apos;; known: %3</source>
        <translation>%1：未知属性“%2”；已知属性：%3</translation>
    </message>
</context>
<context>
    <name>spec.bn_channels</name>
    <message>
        <source>layer %1 (%2): expects input (N, %3, H, W), got %4; set num_features to %5</source>
        <translation>第 %1 层（%2）：期望输入 (N, %3, H, W)，得到的是 %4；请把 num_features 设为 %5</translation>
    </message>
</context>
<context>
    <name>spec.bn_needs_image</name>
    <message>
        <source>layer %1 (%2): expects input (N, %3, H, W), got %4; BatchNorm2d needs image-shaped input</source>
        <translation>第 %1 层（%2）：期望输入 (N, %3, H, W)，得到的是 %4；BatchNorm2d 需要图像形状的输入</translation>
    </message>
</context>
<context>
    <name>spec.classes_invalid</name>
    <message>
        <source>the model has %1 classes; it needs 2 to %2</source>
        <translation>模型有 %1 个类别；需要 2 到 %2 个</translation>
    </message>
</context>
<context>
    <name>spec.conv_channels</name>
    <message>
        <source>layer %1 (%2): expects input (N, %3, H, W), got %4; set in_channels to %5</source>
        <translation>第 %1 层（%2）：期望输入 (N, %3, H, W)，得到的是 %4；请把 in_channels 设为 %5</translation>
    </message>
</context>
<context>
    <name>spec.conv_kernel_fit</name>
    <message>
        <source>layer %1 (%2): kernel %3 (dilation %4) does not fit input %5; use a smaller kernel, more padding, or fewer pooling layers before it</source>
        <translation>第 %1 层（%2）：卷积核 %3（膨胀 %4）放不进输入 %5；请使用更小的卷积核、更多的填充，或减少它之前的池化层</translation>
    </message>
</context>
<context>
    <name>spec.conv_needs_image</name>
    <message>
        <source>layer %1 (%2): expects input (N, %3, H, W), got %4; conv2d needs image-shaped input: remove the Flatten before it or use Linear</source>
        <translation>第 %1 层（%2）：期望输入 (N, %3, H, W)，得到的是 %4；conv2d 需要图像形状的输入：请删除它之前的 Flatten，或改用 Linear</translation>
    </message>
</context>
<context>
    <name>spec.conv_unfold_limit</name>
    <message>
        <source>layer %1 (%2): unfolding its input takes in_channels x kernel x kernel x output positions = more than %3 elements per sample (see docs/model-spec.md, Limits); use a stride, fewer channels or a smaller input</source>
        <translation>第 %1 层（%2）：展开其输入需要 in_channels x kernel x kernel x 输出位置数，即每个样本超过 %3 个元素（见 docs/model-spec.md 的“Limits”一节）；请使用步长、减少通道数或缩小输入</translation>
    </message>
</context>
<context>
    <name>spec.depth_limit</name>
    <message>
        <source>layer %1 (%2): residual blocks nest more than %3 levels deep; flatten the structure (see docs/model-spec.md, Limits)</source>
        <translation>第 %1 层（%2）：残差块嵌套超过 %3 层；请展平结构（见 docs/model-spec.md 的“Limits”一节）</translation>
    </message>
</context>
<context>
    <name>spec.end_classes</name>
    <message>
        <source>the model ends with %1 outputs but the data has %2 classes; set the last layer&apos;s out_features to %2</source>
        <translation>模型最后输出 %1 个值，但数据有 %2 个类别；请把最后一层的 out_features 设为 %2</translation>
    </message>
</context>
<context>
    <name>spec.end_shape</name>
    <message>
        <source>the model ends with shape %1 but the loss needs (N, %2); end with Flatten and Linear(…, %2)</source>
        <translation>模型最后的形状为 %1，但损失函数需要 (N, %2)；请以 Flatten 和 Linear(…, %2) 结尾</translation>
    </message>
</context>
<context>
    <name>spec.file_too_large</name>
    <message>
        <source>model spec &apos;%1&apos; is %2 bytes, more than the limit of %3; is it a model spec?</source>
        <translation>模型规格“%1”有 %2 字节，超过 %3 的上限；它确实是模型规格吗？</translation>
    </message>
</context>
<context>
    <name>spec.input_invalid</name>
    <message>
        <source>the model&apos;s input %1 must have 1 to 3 positive dimensions and at most %2 elements per sample</source>
        <translation>模型的输入 %1 必须有 1 到 3 个正的维度，且每个样本最多 %2 个元素</translation>
    </message>
</context>
<context>
    <name>spec.input_positive</name>
    <message>
        <source>%1: &quot;input&quot; dimensions must be positive integers, got %2</source>
        <translation>%1：&quot;input&quot; 的各维必须是正整数，得到的是 %2</translation>
    </message>
</context>
<context>
    <name>spec.input_shape</name>
    <message>
        <source>%1: &quot;input&quot; must be the per-sample shape, e.g. [1, 28, 28] or [784], got %2</source>
        <translation>%1：&quot;input&quot; 必须是单个样本的形状，例如 [1, 28, 28] 或 [784]，得到的是 %2</translation>
    </message>
</context>
<context>
    <name>spec.input_too_large</name>
    <message>
        <source>%1: &quot;input&quot; %2 has more than %3 elements per sample (see docs/model-spec.md, Limits)</source>
        <translation>%1：&quot;input&quot; %2 每个样本超过 %3 个元素（见 docs/model-spec.md 的“Limits”一节）</translation>
    </message>
</context>
<context>
    <name>spec.label_smoothing</name>
    <message>
        <source>%1: loss &quot;label_smoothing&quot; must be a number in [0, 1), got %2</source>
        <translation>%1：损失的 &quot;label_smoothing&quot; 必须是 [0, 1) 内的数，得到的是 %2</translation>
    </message>
</context>
<context>
    <name>spec.label_smoothing_mse</name>
    <message>
        <source>%1: loss &quot;label_smoothing&quot; applies to cross_entropy only; remove it for %2</source>
        <translation>%1：损失的 &quot;label_smoothing&quot; 只适用于 cross_entropy；对于 %2 请删除它</translation>
    </message>
</context>
<context>
    <name>spec.layer_limit</name>
    <message>
        <source>layer %1 (%2): the model has more than %3 layers (see docs/model-spec.md, Limits)</source>
        <translation>第 %1 层（%2）：模型超过 %3 层（见 docs/model-spec.md 的“Limits”一节）</translation>
    </message>
</context>
<context>
    <name>spec.layer_no_type</name>
    <message>
        <source>%1: missing &quot;type&quot;; use one of %2</source>
        <translation>%1：缺少 &quot;type&quot;；请使用 %2 之一</translation>
    </message>
</context>
<context>
    <name>spec.layer_not_object</name>
    <message>
        <source>%1: each layer must be a JSON object like {&quot;type&quot;: &quot;relu&quot;}</source>
        <translation>%1：每一层都必须是 JSON 对象，例如 {&quot;type&quot;: &quot;relu&quot;}</translation>
    </message>
</context>
<context>
    <name>spec.layer_params_limit</name>
    <message>
        <source>layer %1 (%2): has more than %3 parameters (see docs/model-spec.md, Limits); make it smaller</source>
        <translation>第 %1 层（%2）：参数超过 %3 个（见 docs/model-spec.md 的“Limits”一节）；请把它缩小</translation>
    </message>
</context>
<context>
    <name>spec.layer_unknown</name>
    <message>
        <source>layer %1 (%2): unknown layer type; use one of %3</source>
        <translation>第 %1 层（%2）：未知的层类型；请使用 %3 之一</translation>
    </message>
</context>
<context>
    <name>spec.layers_not_list</name>
    <message>
        <source>%1: must be a list of layers</source>
        <translation>%1：必须是由层组成的列表</translation>
    </message>
</context>
<context>
    <name>spec.linear_features</name>
    <message>
        <source>layer %1 (%2): expects input (N, %3), got %4; set in_features to %5</source>
        <translation>第 %1 层（%2）：期望输入 (N, %3)，得到的是 %4；请把 in_features 设为 %5</translation>
    </message>
</context>
<context>
    <name>spec.linear_needs_flat</name>
    <message>
        <source>layer %1 (%2): expects input (N, %3), got %4; insert a Flatten before it (it would give (N, %5))</source>
        <translation>第 %1 层（%2）：期望输入 (N, %3)，得到的是 %4；请在它之前插入 Flatten（会得到 (N, %5)）</translation>
    </message>
</context>
<context>
    <name>spec.linear_seq_features</name>
    <message>
        <source>layer %1 (%2): expects input (N, T, %3), got %4; set in_features to %5</source>
        <translation>第 %1 层（%2）：期望输入 (N, T, %3)，得到的是 %4；请把 in_features 设为 %5</translation>
    </message>
</context>
<context>
    <name>spec.lm_end_shape</name>
    <message>
        <source>the model ends with shape %1 but a language model must end with (N, T, %2) logits; end with an lm_head</source>
        <translation>模型最后的形状为 %1，但语言模型必须以 (N, T, %2) 的 logits 结尾；请以 lm_head 结尾</translation>
    </message>
</context>
<context>
    <name>spec.lm_end_vocab</name>
    <message>
        <source>the model ends with %1 scores per token but &quot;num_classes&quot; (the vocabulary) is %2; set num_classes to %1</source>
        <translation>模型最后为每个 token 输出 %1 个分数，但 &quot;num_classes&quot;（词表大小）为 %2；请把 num_classes 设为 %1</translation>
    </message>
</context>
<context>
    <name>spec.lm_loss</name>
    <message>
        <source>a language model trains with a plain per-token cross-entropy; set the loss to cross_entropy with label_smoothing 0</source>
        <translation>语言模型使用普通的逐 token 交叉熵训练；请把损失设为 cross_entropy，且 label_smoothing 为 0</translation>
    </message>
</context>
<context>
    <name>spec.loss_shape</name>
    <message>
        <source>%1: &quot;loss&quot; must be {&quot;type&quot;: &quot;cross_entropy&quot;} or {&quot;type&quot;: &quot;mse&quot;}</source>
        <translation>%1：&quot;loss&quot; 必须是 {&quot;type&quot;: &quot;cross_entropy&quot;} 或 {&quot;type&quot;: &quot;mse&quot;}</translation>
    </message>
</context>
<context>
    <name>spec.loss_unknown</name>
    <message>
        <source>%1: unknown loss &apos;%2&apos;; use cross_entropy or mse</source>
        <translation>%1：未知的损失函数“%2”；请使用 cross_entropy 或 mse</translation>
    </message>
</context>
<context>
    <name>spec.name_not_string</name>
    <message>
        <source>%1: &quot;name&quot; must be a string</source>
        <translation>%1：&quot;name&quot; 必须是字符串</translation>
    </message>
</context>
<context>
    <name>spec.no_layers</name>
    <message>
        <source>%1: missing &quot;layers&quot; (see docs/model-spec.md)</source>
        <translation>%1：缺少 &quot;layers&quot;（见 docs/model-spec.md）</translation>
    </message>
</context>
<context>
    <name>spec.no_layers_analysis</name>
    <message>
        <source>the model has no layers; add some (or start from a preset)</source>
        <translation>模型没有任何层；请添加一些层（或从预设开始）</translation>
    </message>
</context>
<context>
    <name>spec.not_object</name>
    <message>
        <source>%1: the top level must be a JSON object with &quot;layers&quot;</source>
        <translation>%1：顶层必须是带有 &quot;layers&quot; 的 JSON 对象</translation>
    </message>
</context>
<context>
    <name>spec.num_classes</name>
    <message>
        <source>%1: &quot;num_classes&quot; must be an integer from 2 to %2, got %3</source>
        <translation>%1：&quot;num_classes&quot; 必须是 2 到 %2 之间的整数，得到的是 %3</translation>
    </message>
</context>
<context>
    <name>spec.output_limit</name>
    <message>
        <source>layer %1 (%2): its output %3 has more than %4 elements per sample (see docs/model-spec.md, Limits); make it smaller</source>
        <translation>第 %1 层（%2）：其输出 %3 每个样本超过 %4 个元素（见 docs/model-spec.md 的“Limits”一节）；请把它缩小</translation>
    </message>
</context>
<context>
    <name>spec.pool_needs_image</name>
    <message>
        <source>layer %1 (%2): expects input (N, C, H, W), got %3; pooling needs image-shaped input</source>
        <translation>第 %1 层（%2）：期望输入 (N, C, H, W)，得到的是 %3；池化需要图像形状的输入</translation>
    </message>
</context>
<context>
    <name>spec.pool_padding</name>
    <message>
        <source>layer %1 (%2): padding %3 must be at most half the kernel size %4</source>
        <translation>第 %1 层（%2）：填充 %3 最多只能是卷积核大小 %4 的一半</translation>
    </message>
</context>
<context>
    <name>spec.pool_window_fit</name>
    <message>
        <source>layer %1 (%2): window %3 is larger than the input %4; use a smaller kernel_size or remove a pooling layer before it</source>
        <translation>第 %1 层（%2）：窗口 %3 大于输入 %4；请使用更小的 kernel_size，或删除它之前的一个池化层</translation>
    </message>
</context>
<context>
    <name>spec.residual_empty</name>
    <message>
        <source>%1: a residual block needs a non-empty &quot;body&quot; list of layers</source>
        <translation>%1：残差块需要一个非空的 &quot;body&quot; 层列表</translation>
    </message>
</context>
<context>
    <name>spec.residual_identity</name>
    <message>
        <source>layer %1 (%2): body gives %3 but the identity shortcut gives %4; they must match to be added: keep channels and size equal in the body or add a shortcut projection (1x1 conv2d)</source>
        <translation>第 %1 层（%2）：主体输出 %3，而恒等捷径输出 %4；两者必须一致才能相加：请在主体中保持通道数和尺寸不变，或添加捷径投影（1x1 conv2d）</translation>
    </message>
</context>
<context>
    <name>spec.residual_shortcut</name>
    <message>
        <source>layer %1 (%2): body gives %3 but the shortcut gives %4; they must match to be added: keep channels and size equal in the body and the shortcut</source>
        <translation>第 %1 层（%2）：主体输出 %3，而捷径输出 %4；两者必须一致才能相加：请使主体和捷径的通道数和尺寸一致</translation>
    </message>
</context>
<context>
    <name>spec.rope_scaling</name>
    <message>
        <source>%1: &quot;rope_scaling&quot; %2; write {&quot;type&quot;: &quot;llama3&quot;, &quot;factor&quot;: 32.0, &quot;low_freq_factor&quot;: 1.0, &quot;high_freq_factor&quot;: 4.0, &quot;original_max_position_embeddings&quot;: 8192} or null</source>
        <translation>%1：&quot;rope_scaling&quot; %2；请写成 {&quot;type&quot;: &quot;llama3&quot;, &quot;factor&quot;: 32.0, &quot;low_freq_factor&quot;: 1.0, &quot;high_freq_factor&quot;: 4.0, &quot;original_max_position_embeddings&quot;: 8192} 或 null</translation>
    </message>
</context>
<context>
    <name>spec.seq_not_language_model</name>
    <message>
        <source>a sequence length (--seq %1) applies to language models only; model &apos;%2&apos; does not start with a token_embedding</source>
        <translation>序列长度（--seq %1）只适用于语言模型；模型“%2”不以 token_embedding 开头</translation>
    </message>
</context>
<context>
    <name>spec.seq_range</name>
    <message>
        <source>sequence length %1 is out of range: model &apos;%2&apos; has learned positions for 1 to %3 tokens; pick a --seq in that range or raise the position embedding&apos;s max_positions</source>
        <translation>序列长度 %1 超出范围：模型“%2”只学习了 1 到 %3 个 token 的位置；请在该范围内选择 --seq，或增大位置嵌入的 max_positions</translation>
    </message>
</context>
<context>
    <name>spec.too_deep</name>
    <message>
        <source>%1: residual blocks nest more than %2 levels deep; flatten the structure (see docs/model-spec.md, Limits)</source>
        <translation>%1：残差块嵌套超过 %2 层；请展平结构（见 docs/model-spec.md 的“Limits”一节）</translation>
    </message>
</context>
<context>
    <name>spec.too_many_layers</name>
    <message>
        <source>%1: the model has more than %2 layers (residual blocks and their contents included; see docs/model-spec.md, Limits)</source>
        <translation>%1：模型超过 %2 层（包括残差块及其内容；见 docs/model-spec.md 的“Limits”一节）</translation>
    </message>
</context>
<context>
    <name>spec.total_params_limit</name>
    <message>
        <source>layer %1 (%2): with it the model has more than %3 parameters (see docs/model-spec.md, Limits)</source>
        <translation>第 %1 层（%2）：加上这一层后，模型的参数超过 %3 个（见 docs/model-spec.md 的“Limits”一节）</translation>
    </message>
</context>
<context>
    <name>spec.unknown_key</name>
    <message>
        <source>%1: unknown key &apos;%2&apos;; expected name, input, num_classes, layers, loss (see docs/model-spec.md)</source>
        <translation>%1：未知键“%2”；应为 name、input、num_classes、layers、loss（见 docs/model-spec.md）</translation>
    </message>
</context>
<context>
    <name>spec.unknown_layer</name>
    <message>
        <source>%1: unknown layer type &apos;%2&apos;; use one of %3</source>
        <translation>%1：未知的层类型“%2”；请使用 %3 之一</translation>
    </message>
</context>
<context>
    <name>spec.unknown_layer_type</name>
    <message>
        <source>unknown layer type &apos;%1&apos;; use one of %2</source>
        <translation>未知的层类型“%1”；请使用 %2 之一</translation>
    </message>
</context>
<context>
    <name>spec.unreadable</name>
    <message>
        <source>cannot read model spec &apos;%1&apos;: no such file or not readable</source>
        <translation>无法读取模型规格“%1”：文件不存在或不可读</translation>
    </message>
</context>
<context>
    <name>spec.vocab_not_language_model</name>
    <message>
        <source>model &apos;%1&apos; takes no tokens, so it has no vocabulary to resize</source>
        <translation>模型“%1”不接受 token，因此没有可调整大小的词表</translation>
    </message>
</context>
<context>
    <name>spec.vocab_range</name>
    <message>
        <source>a vocabulary of %1 tokens is out of range (2 to 10000000)</source>
        <translation>%1 个 token 的词表超出范围（2 到 10000000）</translation>
    </message>
</context>
<context>
    <name>store.bad_config</name>
    <message>
        <source>run %1: the stored configuration is not valid JSON (%2)</source>
        <translation>运行 %1：保存的配置不是有效的 JSON（%2）</translation>
    </message>
</context>
<context>
    <name>strategy.bad_shard</name>
    <message>
        <source>unknown sharding &apos;%1&apos;; use none, dp, zero1, zero2 or zero3 (--shard)</source>
        <translation>未知的分片方式“%1”；请使用 none、dp、zero1、zero2 或 zero3（--shard）</translation>
    </message>
</context>
<context>
    <name>strategy.batch_below_ranks</name>
    <message>
        <source>--batch %1 is smaller than the %2 ranks; every rank needs a sample</source>
        <translation>--batch %1 小于 rank 数 %2；每个 rank 至少需要一个样本</translation>
    </message>
</context>
<context>
    <name>strategy.lora_alpha</name>
    <message>
        <source>--lora-alpha must be a number from 0 (the rank) to 1000000</source>
        <translation>--lora-alpha 必须是 0（即秩）到 1000000 之间的数</translation>
    </message>
</context>
<context>
    <name>strategy.lora_dropout</name>
    <message>
        <source>--lora-dropout must be a probability from 0 up to (not including) 1, got %1</source>
        <translation>--lora-dropout 必须是从 0 到 1（不含 1）的概率，实际为 %1</translation>
    </message>
</context>
<context>
    <name>strategy.lora_dropout_without_lora</name>
    <message>
        <source>--lora-dropout drops the input of LoRA&apos;s adapters: it needs --lora R</source>
        <translation>--lora-dropout 丢弃的是 LoRA 适配器的输入：需要同时指定 --lora R</translation>
    </message>
</context>
<context>
    <name>strategy.lora_offload</name>
    <message>
        <source>--lora trains small adapters on a frozen model: it does not combine with --offload-params (one process, --shard dp, the ZeRO stages, --pipeline and --tp-head do)</source>
        <translation>--lora 在冻结的模型上训练小型适配器：它不能与 --offload-params 组合（单进程、--shard dp、各 ZeRO 阶段、--pipeline 和 --tp-head 都可以）</translation>
    </message>
</context>
<context>
    <name>strategy.lora_rank</name>
    <message>
        <source>--lora must be between 1 and 4096 (the adapters&apos; rank), got %1</source>
        <translation>--lora 必须在 1 到 4096 之间（适配器的秩），实际为 %1</translation>
    </message>
</context>
<context>
    <name>strategy.lora_targets</name>
    <message>
        <source>--lora-targets %1: &apos;%2&apos; is not one of peft&apos;s projection names or is repeated; give a comma list of %3</source>
        <translation>--lora-targets %1：&apos;%2&apos; 不是 peft 的投影名称之一，或重复出现；请给出以逗号分隔的 %3 列表</translation>
    </message>
</context>
<context>
    <name>strategy.lora_targets_where</name>
    <message>
        <source>--lora-targets chooses the projections of a LLaMA-family model&apos;s blocks that get LoRA adapters; it needs --lora R and a model of llama_block layers (GPT and linear layers adapt all their projections)</source>
        <translation>--lora-targets 选择 LLaMA 系列模型各块中加 LoRA 适配器的投影；它需要 --lora R 以及由 llama_block 层组成的模型（GPT 和线性层会适配其全部投影）</translation>
    </message>
</context>
<context>
    <name>strategy.offload_parameters_zero3</name>
    <message>
        <source>--offload-params needs --shard zero3 (parameters are brought to the device unit by unit, as zero3 gathers them); add --shard zero3, also on one rank</source>
        <translation>--offload-params 需要 --shard zero3（参数按单元逐个送到设备上，与 zero3 的收集方式相同）；请加上 --shard zero3，单个 rank 也一样</translation>
    </message>
</context>
<context>
    <name>strategy.pipeline_checkpoint</name>
    <message>
        <source>--pipeline %1 keeps the activations of the micro-batches in flight; activation checkpointing inside a stage is not built: leave --checkpoint out</source>
        <translation>--pipeline %1 会保留正在处理的微批次的激活值；阶段内的激活检查点尚未实现：请去掉 --checkpoint</translation>
    </message>
</context>
<context>
    <name>strategy.pipeline_rank_batch</name>
    <message>
        <source>--pipeline %1: every stage sees the whole batch; leave --rank-batch out</source>
        <translation>--pipeline %1：每个阶段都处理整个批次；请去掉 --rank-batch</translation>
    </message>
</context>
<context>
    <name>strategy.pipeline_replicas</name>
    <message>
        <source>--pipeline %1 on %2 ranks makes %3 data-parallel replicas of the pipeline: give --shard dp (the replicas of a stage all-reduce its gradients) or zero1 (and shard the stage&apos;s optimizer state over them)</source>
        <translation>--pipeline %1 在 %2 个 rank 上会形成 %3 个流水线的数据并行副本：请给出 --shard dp（同一阶段的各副本对其梯度做 all-reduce）或 zero1（并把该阶段的优化器状态分片到各副本上）</translation>
    </message>
</context>
<context>
    <name>strategy.pipeline_shard</name>
    <message>
        <source>--pipeline %1 gives each stage&apos;s rank its own layers; it does not combine with --shard %2 (leave --shard out)</source>
        <translation>--pipeline %1 让每个阶段的 rank 持有自己的层；不能与 --shard %2 组合（请去掉 --shard）</translation>
    </message>
</context>
<context>
    <name>strategy.pipeline_small</name>
    <message>
        <source>--pipeline must be at least 1, got %1</source>
        <translation>--pipeline 必须至少为 1，实际为 %1</translation>
    </message>
</context>
<context>
    <name>strategy.pipeline_split_alone</name>
    <message>
        <source>--pipeline-split needs --pipeline K</source>
        <translation>--pipeline-split 需要 --pipeline K</translation>
    </message>
</context>
<context>
    <name>strategy.pipeline_tp</name>
    <message>
        <source>--pipeline %1 with --tp-head %2 runs on exactly %1 x %2 = %3 ranks (each stage on %2 ranks, the last stage&apos;s head split over them); data-parallel replicas of it, --shard and --rank-batch are not built: start it on %3 ranks and leave --shard and --rank-batch out</source>
        <translation>--pipeline %1 与 --tp-head %2 组合时恰好运行在 %1 x %2 = %3 个进程上（每个阶段占 %2 个进程，最后一个阶段的输出头拆分到这些进程上）；其数据并行副本、--shard 和 --rank-batch 尚未实现：请在 %3 个进程上启动，并去掉 --shard 和 --rank-batch</translation>
    </message>
</context>
<context>
    <name>strategy.pipeline_world</name>
    <message>
        <source>--pipeline %1 needs a multiple of %1 ranks (K stages x D data-parallel replicas), but the run has %2; start it on %1 ranks, or 2 x %1, ... (--ranks, or mpirun -np)</source>
        <translation>--pipeline %1 需要 %1 的整数倍个 rank（K 个阶段 × D 个数据并行副本），但本次运行有 %2 个；请在 %1 个、2 × %1 个……rank 上启动（--ranks，或 mpirun -np）</translation>
    </message>
</context>
<context>
    <name>strategy.pipeline_zero</name>
    <message>
        <source>--pipeline %1 with --shard %2 is not built: a stage&apos;s models in flight share one gradient buffer and a tied head sums whole gradients, which zero2 and zero3 would shard; give --shard zero1 (each stage&apos;s optimizer state sharded over its %3 replicas) or dp</source>
        <translation>--pipeline %1 与 --shard %2 的组合尚未实现：一个阶段中同时在途的各模型共用一个梯度缓冲区，绑定的输出头要对完整的梯度求和，而 zero2 和 zero3 会把梯度分片；请使用 --shard zero1（每个阶段的优化器状态分片到它的 %3 个副本上）或 dp</translation>
    </message>
</context>
<context>
    <name>strategy.quantize_base</name>
    <message>
        <source>--quantize-base %1: use int8 (a scale per row), int4 (a scale per 64 values) or nf4 (QLoRA&apos;s 4-bit NormalFloat), or none</source>
        <translation>--quantize-base %1：请使用 int8（每行一个缩放系数）、int4（每 64 个值一个缩放系数）或 nf4（QLoRA 的 4 位 NormalFloat），或 none</translation>
    </message>
</context>
<context>
    <name>strategy.quantize_base_lora</name>
    <message>
        <source>--quantize-base %1 stores LoRA&apos;s frozen base quantised while the adapters train; add --lora R (for example --lora 8), or use --quantize to evaluate a trained model quantised</source>
        <translation>--quantize-base %1 在训练适配器期间以量化形式存储 LoRA 的冻结基座；请加上 --lora R（例如 --lora 8），或用 --quantize 评估量化后的已训练模型</translation>
    </message>
</context>
<context>
    <name>strategy.quantize_base_tp</name>
    <message>
        <source>--quantize-base %1 with --tp-head %2: a split head&apos;s rows of a packed weight are not built; train the split head&apos;s adapters on an unquantised base (leave --quantize-base out), or keep the head whole (leave --tp-head out)</source>
        <translation>--quantize-base %1 与 --tp-head %2：尚未实现拆分头对打包权重按行切分；请在未量化的基座上训练拆分头的适配器（去掉 --quantize-base），或保持头完整（去掉 --tp-head）</translation>
    </message>
</context>
<context>
    <name>strategy.rank_batch_below_acc</name>
    <message>
        <source>a rank&apos;s batch of %1 cannot be split into %2 micro-batches; use fewer micro-batches or larger rank batches</source>
        <translation>rank 的批次大小 %1 无法拆成 %2 个微批次；请减少微批次数，或增大各 rank 的批次</translation>
    </message>
</context>
<context>
    <name>strategy.rank_batch_count</name>
    <message>
        <source>--rank-batch lists %1 batches for %2 ranks; give one per rank</source>
        <translation>--rank-batch 为 %2 个 rank 列出了 %1 个批次；请每个 rank 给一个</translation>
    </message>
</context>
<context>
    <name>strategy.rank_batch_small</name>
    <message>
        <source>every --rank-batch entry must be at least 1</source>
        <translation>每个 --rank-batch 条目都必须至少为 1</translation>
    </message>
</context>
<context>
    <name>strategy.rank_batch_sum</name>
    <message>
        <source>--rank-batch adds up to %1 samples but --batch is %2; make them agree</source>
        <translation>--rank-batch 的总和为 %1 个样本，而 --batch 为 %2；请使两者一致</translation>
    </message>
</context>
<context>
    <name>strategy.ranks_micro_and_acc</name>
    <message>
        <source>with several ranks give --micro-batch or --accumulate, not both</source>
        <translation>多个 rank 时请给出 --micro-batch 或 --accumulate 之一，不要同时给出</translation>
    </message>
</context>
<context>
    <name>strategy.ranks_without_shard</name>
    <message>
        <source>%1 ranks need a way to share the work: --shard dp, zero1, zero2 or zero3</source>
        <translation>%1 个 rank 需要一种分担工作的方式：--shard dp、zero1、zero2 或 zero3</translation>
    </message>
</context>
<context>
    <name>strategy.tp_head_rank_batch</name>
    <message>
        <source>--tp-head %1: every rank trains on the whole batch; leave --rank-batch out</source>
        <translation>--tp-head %1：每个 rank 都在整个批次上训练；请去掉 --rank-batch</translation>
    </message>
</context>
<context>
    <name>strategy.tp_head_replicas</name>
    <message>
        <source>--tp-head %1 on %2 ranks makes %3 data-parallel replicas of the split head: give --shard dp (the replicas all-reduce their gradients) or zero1 (and shard the optimizer state over them)</source>
        <translation>--tp-head %1 在 %2 个进程上会形成拆分输出头的 %3 个数据并行副本：请加上 --shard dp（各副本对梯度做 all-reduce）或 zero1（并把优化器状态分片到各副本上）</translation>
    </message>
</context>
<context>
    <name>strategy.tp_head_shard</name>
    <message>
        <source>--tp-head %1 keeps the body whole on every rank; it does not combine with --shard %2 (leave --shard out)</source>
        <translation>--tp-head %1 在每个 rank 上保留完整的模型主体；不能与 --shard %2 组合（请去掉 --shard）</translation>
    </message>
</context>
<context>
    <name>strategy.tp_head_small</name>
    <message>
        <source>--tp-head must be at least 1, got %1</source>
        <translation>--tp-head 必须至少为 1，实际为 %1</translation>
    </message>
</context>
<context>
    <name>strategy.tp_head_world</name>
    <message>
        <source>--tp-head %1 splits the head over %1 ranks (T x D: D data-parallel replicas of it on T x D ranks), but the run has %2; start it on %1 ranks, or 2 x %1, ... (--ranks, or mpirun -np)</source>
        <translation>--tp-head %1 把输出头拆分到 %1 个进程上（T x D：在 T x D 个进程上得到它的 D 个数据并行副本），但本次运行有 %2 个进程；请在 %1 个、2 x %1 个……进程上启动（--ranks，或 mpirun -np）</translation>
    </message>
</context>
<context>
    <name>strategy.tp_head_zero</name>
    <message>
        <source>--tp-head %1 with --shard %2 is not built: the split head&apos;s ranks sum whole gradients (the norm&apos;s head rows, LoRA&apos;s adapter), which zero2 and zero3 would shard; give --shard zero1 (the optimizer state sharded over the %3 replicas) or dp</source>
        <translation>--tp-head %1 与 --shard %2 的组合尚未实现：拆分输出头的各进程要对完整的梯度求和（范数中输出头的行、LoRA 的适配器），而 zero2 和 zero3 会把梯度分片；请使用 --shard zero1（优化器状态分片到 %3 个副本上）或 dp</translation>
    </message>
</context>
<context>
    <name>table.cannot_open</name>
    <message>
        <source>%1: cannot open; check the file&apos;s permissions</source>
        <translation>%1：无法打开；请检查文件权限</translation>
    </message>
</context>
<context>
    <name>table.empty</name>
    <message>
        <source>%1: the file holds no rows; a table starts with a row naming its columns, then a row for each sample</source>
        <translation>%1：文件中没有任何行；表格以一行列名开头，之后每个样本一行</translation>
    </message>
</context>
<context>
    <name>table.missing_target</name>
    <message>
        <source>%1, line %2: the target column &apos;%3&apos; is empty; every sample needs its class</source>
        <translation>%1，第 %2 行：目标列“%3”为空；每个样本都需要类别</translation>
    </message>
</context>
<context>
    <name>table.missing_value</name>
    <message>
        <source>%1, line %2: column &apos;%3&apos; has no value; fill it in or remove the row (Headroom does not impute)</source>
        <translation>%1，第 %2 行：列“%3”没有值；请填写或删除该行（Headroom 不做缺失值填补）</translation>
    </message>
</context>
<context>
    <name>table.no_features</name>
    <message>
        <source>%1: the table has only the target column &apos;%2&apos;; a model needs at least one other column of numbers to learn from</source>
        <translation>%1：表格只有目标列“%2”；模型至少需要另一列数值来学习</translation>
    </message>
</context>
<context>
    <name>table.no_file</name>
    <message>
        <source>%1 needs a file, e.g. --data %1/path/to/table.%2 --target COLUMN</source>
        <translation>%1 需要一个文件，例如 --data %1/path/to/table.%2 --target COLUMN</translation>
    </message>
</context>
<context>
    <name>table.no_target</name>
    <message>
        <source>%1: name the column to predict with --target COLUMN; the table&apos;s columns are %2</source>
        <translation>%1：请用 --target COLUMN 指定要预测的列；表格的列有 %2</translation>
    </message>
</context>
<context>
    <name>table.not_a_number</name>
    <message>
        <source>%1, line %2: column &apos;%3&apos; holds &apos;%4&apos;, which is not a finite number; every column but the target must be numeric (encode categories as numbers or drop the column)</source>
        <translation>%1，第 %2 行：列“%3”的值“%4”不是有限数值；除目标列外每一列都必须是数值（请把类别编码为数字或删除该列）</translation>
    </message>
</context>
<context>
    <name>table.one_class</name>
    <message>
        <source>%1: the target column &apos;%2&apos; has only the value &apos;%3&apos;; a classifier needs at least 2 classes</source>
        <translation>%1：目标列“%2”只有一个值“%3”；分类器至少需要 2 个类别</translation>
    </message>
</context>
<context>
    <name>table.out_of_range</name>
    <message>
        <source>%1, line %2: column &apos;%3&apos; holds %4, too far from the training rows&apos; values to be held as a 32-bit float once standardised; rescale the column (a logarithm, other units) or remove the row</source>
        <translation>%1，第 %2 行：列“%3”的值 %4 与训练行的取值相差太远，标准化后无法用 32 位浮点数表示；请缩放该列（取对数、换单位）或删除该行</translation>
    </message>
</context>
<context>
    <name>table.ragged_row</name>
    <message>
        <source>%1, line %2: %3 fields, but the header names %4 columns; every row needs a value for each column (quote a value that holds the delimiter)</source>
        <translation>%1，第 %2 行：有 %3 个字段，但表头有 %4 列；每行的每一列都需要一个值（含分隔符的值请加引号）</translation>
    </message>
</context>
<context>
    <name>table.target_not_a_column</name>
    <message>
        <source>%1: no column is named &apos;%2&apos;; the table&apos;s columns are %3 (or give a column&apos;s number from 1 to %4)</source>
        <translation>%1：没有名为“%2”的列；表格的列有 %3（也可以给出 1 到 %4 的列号）</translation>
    </message>
</context>
<context>
    <name>table.target_twice</name>
    <message>
        <source>%1: two columns are named &apos;%2&apos;; give the target&apos;s number instead (--target %3 for the first)</source>
        <translation>%1：有两列都叫“%2”；请改用列号（第一列为 --target %3）</translation>
    </message>
</context>
<context>
    <name>table.text_after_quote</name>
    <message>
        <source>%1, line %2: text follows a closing quote in field %3; quote the whole field (a &quot; inside it is written &quot;&quot;)</source>
        <translation>%1，第 %2 行：第 %3 个字段的右引号后还有文字；请给整个字段加引号（字段内的 &quot; 写作 &quot;&quot;）</translation>
    </message>
</context>
<context>
    <name>table.too_few_rows</name>
    <message>
        <source>%1: %2 data row(s); a table needs at least 2 (one for training, one for the test set)</source>
        <translation>%1：只有 %2 行数据；表格至少需要 2 行（一行用于训练，一行用于测试集）</translation>
    </message>
</context>
<context>
    <name>table.too_many_classes</name>
    <message>
        <source>%1: the target column &apos;%2&apos; has more than %3 different values; Headroom trains classifiers, so the target must be a class (a regression target is not supported)</source>
        <translation>%1：目标列“%2”有超过 %3 个不同的值；Headroom 训练的是分类器，目标必须是类别（不支持回归目标）</translation>
    </message>
</context>
<context>
    <name>table.too_many_columns</name>
    <message>
        <source>%1: %2 columns is more than the %3 Headroom reads</source>
        <translation>%1：%2 列超过了 Headroom 可读取的 %3 列</translation>
    </message>
</context>
<context>
    <name>table.unterminated_quote</name>
    <message>
        <source>%1, line %2: a quoted field is not closed before the end of the file; add the closing &quot; (a &quot; inside a quoted field is written &quot;&quot;)</source>
        <translation>%1，第 %2 行：带引号的字段直到文件结尾都没有闭合；请补上右引号 &quot;（引号字段内的 &quot; 写作 &quot;&quot;）</translation>
    </message>
</context>
<context>
    <name>text.file_description</name>
    <message>
        <source>a UTF-8 text file: the first 90% for training, the rest for validation</source>
        <translation>UTF-8 文本文件：前 90% 用于训练，其余用于验证</translation>
    </message>
</context>
<context>
    <name>text.fortunes_description</name>
    <message>
        <source>Debian&apos;s fortunes: about 2.5 MB of English text, every tenth fortune for validation</source>
        <translation>Debian 的 fortunes：约 2.5 MB 英文文本，每第十条用于验证</translation>
    </message>
</context>
<context>
    <name>text.no_file</name>
    <message>
        <source>text file &apos;%1&apos; not found; pass --data text:FILE with a UTF-8 text file, or text:fortunes</source>
        <translation>找不到文本文件“%1”；请传入 --data text:FILE（FILE 为 UTF-8 文本文件），或 text:fortunes</translation>
    </message>
</context>
<context>
    <name>text.no_fortunes</name>
    <message>
        <source>the fortunes were not found (searched %1); install them (apt install fortunes), set HEADROOM_DATA_DIR to a folder holding fortunes/, or train on text:FILE</source>
        <translation>找不到 fortunes（已搜索 %1）；请安装它（apt install fortunes），或把 HEADROOM_DATA_DIR 设为包含 fortunes/ 的文件夹，或在 text:FILE 上训练</translation>
    </message>
</context>
<context>
    <name>text.not_text</name>
    <message>
        <source>&apos;%1&apos; is not a text dataset; use text:fortunes or text:FILE</source>
        <translation>“%1”不是文本数据集；请使用 text:fortunes 或 text:FILE</translation>
    </message>
</context>
<context>
    <name>text.not_utf8</name>
    <message>
        <source>%1 is not UTF-8 text (byte %2 is not valid UTF-8); convert it (iconv -t UTF-8) or pick a text file</source>
        <translation>%1 不是 UTF-8 文本（第 %2 字节不是有效的 UTF-8）；请转换它（iconv -t UTF-8），或选择一个文本文件</translation>
    </message>
</context>
<context>
    <name>text.probe_file</name>
    <message>
        <source>%1 KiB</source>
        <translation>%1 KiB</translation>
    </message>
</context>
<context>
    <name>text.probe_fortunes</name>
    <message>
        <source>%1 files, %2 KiB</source>
        <translation>%1 个文件，%2 KiB</translation>
    </message>
</context>
<context>
    <name>text.probe_no_file</name>
    <message>
        <source>file &apos;%1&apos; not found</source>
        <translation>找不到文件“%1”</translation>
    </message>
</context>
<context>
    <name>text.probe_no_fortunes</name>
    <message>
        <source>not found; install it with apt install fortunes</source>
        <translation>未找到；请用 apt install fortunes 安装</translation>
    </message>
</context>
<context>
    <name>text.probe_no_path</name>
    <message>
        <source>choose a text file</source>
        <translation>请选择一个文本文件</translation>
    </message>
</context>
<context>
    <name>text.too_few_tokens</name>
    <message>
        <source>the %1 text has %2 tokens but a sequence of %3 needs at least %4; use a shorter --seq or more text</source>
        <translation>%1 文本有 %2 个 token，但长度为 %3 的序列至少需要 %4 个；请使用更短的 --seq 或更多文本</translation>
    </message>
</context>
<context>
    <name>text.too_short</name>
    <message>
        <source>%1 holds only %2 bytes of text; a language model needs more</source>
        <translation>%1 只有 %2 字节的文本；语言模型需要更多</translation>
    </message>
</context>
<context>
    <name>text.unreadable</name>
    <message>
        <source>cannot read %1; check that the file exists and is readable</source>
        <translation>无法读取 %1；请检查文件是否存在且可读</translation>
    </message>
</context>
<context>
    <name>timeline.part</name>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
</context>
<context>
    <name>timeline.part_layer</name>
    <message>
        <source>%1 of layer %2 (%3)</source>
        <translation>第 %2 层的%1（%3）</translation>
    </message>
</context>
<context>
    <name>timeline.part_layers</name>
    <message>
        <source>%1 of layers %2–%3 (%4)</source>
        <translation>第 %2–%3 层的%1（%4）</translation>
    </message>
</context>
<context>
    <name>timeline.part_rest</name>
    <message>
        <source>the rest (%1)</source>
        <translation>其余（%1）</translation>
    </message>
</context>
<context>
    <name>timeline.peak</name>
    <message>
        <source>peak %1 during %2: %3</source>
        <translation>峰值 %1，出现在%2期间：%3</translation>
    </message>
</context>
<context>
    <name>timeline.peak_at_start</name>
    <message>
        <source>peak %1 at the start of the step: %2</source>
        <translation>峰值 %1，出现在步骤开始时：%2</translation>
    </message>
</context>
<context>
    <name>timeline.phase_backward</name>
    <message>
        <source>the backward of layer %1 (%2)</source>
        <translation>第 %1 层（%2）的反向</translation>
    </message>
</context>
<context>
    <name>timeline.phase_forward</name>
    <message>
        <source>the forward of layer %1 (%2)</source>
        <translation>第 %1 层（%2）的前向</translation>
    </message>
</context>
<context>
    <name>timeline.phase_gather</name>
    <message>
        <source>the gather of unit %1&apos;s parameters</source>
        <translation>收集单元 %1 的参数</translation>
    </message>
</context>
<context>
    <name>timeline.phase_head_reduce</name>
    <message>
        <source>the all-reduce of the split head&apos;s input gradient</source>
        <translation>拆分输出头的输入梯度全归约</translation>
    </message>
</context>
<context>
    <name>timeline.phase_loss</name>
    <message>
        <source>the loss</source>
        <translation>损失计算</translation>
    </message>
</context>
<context>
    <name>timeline.phase_offload</name>
    <message>
        <source>the offload transfers</source>
        <translation>卸载传输</translation>
    </message>
</context>
<context>
    <name>timeline.phase_receive_activations</name>
    <message>
        <source>the pipeline receive of activations from stage %1</source>
        <translation>流水线从阶段 %1 接收激活</translation>
    </message>
</context>
<context>
    <name>timeline.phase_receive_gradient</name>
    <message>
        <source>the pipeline receive of the output gradient from stage %1</source>
        <translation>流水线从阶段 %1 接收输出梯度</translation>
    </message>
</context>
<context>
    <name>timeline.phase_receive_input</name>
    <message>
        <source>the copy of the input into the first stage</source>
        <translation>把输入复制到第一个阶段</translation>
    </message>
</context>
<context>
    <name>timeline.phase_recompute</name>
    <message>
        <source>the recompute of checkpointed block %1</source>
        <translation>检查点块 %1 的重算</translation>
    </message>
</context>
<context>
    <name>timeline.phase_reduce</name>
    <message>
        <source>the gradient reduction</source>
        <translation>梯度归约</translation>
    </message>
</context>
<context>
    <name>timeline.phase_send_activations</name>
    <message>
        <source>the pipeline send of activations to stage %1</source>
        <translation>流水线向阶段 %1 发送激活</translation>
    </message>
</context>
<context>
    <name>timeline.phase_send_gradient</name>
    <message>
        <source>the pipeline send of the input gradient to stage %1</source>
        <translation>流水线向阶段 %1 发送输入梯度</translation>
    </message>
</context>
<context>
    <name>timeline.phase_update</name>
    <message>
        <source>the optimizer update</source>
        <translation>优化器更新</translation>
    </message>
</context>
<context>
    <name>tokenizer.bpe_bad</name>
    <message>
        <source>%1 is not a SentencePiece model: %2</source>
        <translation>%1 不是 SentencePiece 模型：%2</translation>
    </message>
</context>
<context>
    <name>tokenizer.bpe_empty</name>
    <message>
        <source>the text is empty, so no BPE vocabulary can be trained</source>
        <translation>文本为空，因此无法训练 BPE 词表</translation>
    </message>
</context>
<context>
    <name>tokenizer.bpe_train</name>
    <message>
        <source>SentencePiece could not train a BPE of %1 tokens on this text: %2; pick a smaller bpe:N (it needs at least 256 byte pieces plus the text&apos;s characters)</source>
        <translation>SentencePiece 无法在此文本上训练 %1 个 token 的 BPE：%2；请选择更小的 bpe:N（它至少需要 256 个字节片段加上文本中的字符）</translation>
    </message>
</context>
<context>
    <name>tokenizer.char_bad</name>
    <message>
        <source>the tokenizer file %1 is not valid JSON: %2</source>
        <translation>分词器文件 %1 不是有效的 JSON：%2</translation>
    </message>
</context>
<context>
    <name>tokenizer.char_empty</name>
    <message>
        <source>the text is empty, so a character vocabulary cannot be made</source>
        <translation>文本为空，因此无法建立字符词表</translation>
    </message>
</context>
<context>
    <name>tokenizer.char_format</name>
    <message>
        <source>the tokenizer file %1 is not a character vocabulary ({&quot;type&quot;: &quot;char&quot;, &quot;vocab&quot;: [...]})</source>
        <translation>分词器文件 %1 不是字符词表（{&quot;type&quot;: &quot;char&quot;, &quot;vocab&quot;: [...]}）</translation>
    </message>
</context>
<context>
    <name>tokenizer.char_unknown</name>
    <message>
        <source>the character &apos;%1&apos; is not in the model&apos;s character vocabulary (%2 characters seen in its training text); leave it out of the prompt</source>
        <translation>字符“%1”不在模型的字符词表中（其训练文本中出现过 %2 个字符）；请从提示词中去掉它</translation>
    </message>
</context>
<context>
    <name>tokenizer.hf_format</name>
    <message>
        <source>%1 is not a byte-level BPE tokenizer.json Headroom can read: %2; use the tokenizer.json of a GPT-2, Llama 3 or Qwen2 model (or a tokenizer.model)</source>
        <translation>%1 不是 Headroom 能读取的字节级 BPE tokenizer.json：%2；请使用 GPT-2、Llama 3 或 Qwen2 模型的 tokenizer.json（或 tokenizer.model）</translation>
    </message>
</context>
<context>
    <name>tokenizer.hf_json</name>
    <message>
        <source>%1 is not valid JSON: %2</source>
        <translation>%1 不是有效的 JSON：%2</translation>
    </message>
</context>
<context>
    <name>tokenizer.hf_regex</name>
    <message>
        <source>%1: the pre-tokenizer&apos;s pattern does not compile (%2 at offset %3); the file is damaged or uses a pattern PCRE2 does not know</source>
        <translation>%1：预分词器的正则表达式无法编译（%2，位于偏移 %3）；文件已损坏，或使用了 PCRE2 不支持的写法</translation>
    </message>
</context>
<context>
    <name>tokenizer.hf_regex_limit</name>
    <message>
        <source>the tokenizer&apos;s pre-tokenizer pattern gave up on this text (PCRE2 error %1, its match limit); the tokenizer.json&apos;s pattern is not one a model ships with</source>
        <translation>分词器的预分词正则在这段文本上放弃了（PCRE2 错误 %1，达到匹配上限）；该 tokenizer.json 的正则不是模型自带的那种</translation>
    </message>
</context>
<context>
    <name>tokenizer.missing_file</name>
    <message>
        <source>cannot read the tokenizer file %1; it belongs next to model.safetensors (copy it along with the weights)</source>
        <translation>无法读取分词器文件 %1；它应位于 model.safetensors 旁边（请与权重一起复制）</translation>
    </message>
</context>
<context>
    <name>tokenizer.unknown</name>
    <message>
        <source>unknown tokenizer &apos;%1&apos;; use byte (the default), char, bpe:N with N from 260 to 1000000, or a tokenizer.json / tokenizer.model file (or the model folder holding it) (--tokenizer)</source>
        <translation>未知的分词器“%1”；请使用 byte（默认）、char、N 为 260 到 1000000 的 bpe:N，或 tokenizer.json / tokenizer.model 文件（或包含它的模型文件夹）（--tokenizer）</translation>
    </message>
</context>
<context>
    <name>tokenizer.unknown_kind</name>
    <message>
        <source>the weights name an unknown tokenizer &apos;%1&apos;; they were written by a newer Headroom</source>
        <translation>权重中指定了未知的分词器“%1”；它们是由更新版本的 Headroom 写出的</translation>
    </message>
</context>
<context>
    <name>tp_head.bad_label</name>
    <message>
        <source>label %1 in row %2 is outside [0, %3): the data&apos;s labels do not match the model&apos;s classes; check num_classes and the data set</source>
        <translation>第 %2 行的标签 %1 不在 [0, %3) 内：数据的标签与模型的类别不符；请检查 num_classes 和数据集</translation>
    </message>
</context>
<context>
    <name>tp_head.mse</name>
    <message>
        <source>--tp-head %1 computes a split softmax cross-entropy; the model&apos;s loss is &apos;%2&apos;: use cross_entropy</source>
        <translation>--tp-head %1 计算拆分的 softmax 交叉熵；模型的损失是“%2”：请使用 cross_entropy</translation>
    </message>
</context>
<context>
    <name>tp_head.no_layers</name>
    <message>
        <source>--tp-head %1: the model has no layers</source>
        <translation>--tp-head %1：模型没有任何层</translation>
    </message>
</context>
<context>
    <name>tp_head.not_linear</name>
    <message>
        <source>--tp-head %1 splits the last layer&apos;s output columns, but this model ends with &apos;%2&apos;; end it with a linear layer or an lm_head</source>
        <translation>--tp-head %1 拆分最后一层的输出列，但此模型以“%2”结尾；请以线性层或 lm_head 结尾</translation>
    </message>
</context>
<context>
    <name>tp_head.tied</name>
    <message>
        <source>--tp-head %1 splits the language-model head&apos;s columns, but this model&apos;s head is tied to the token embedding (it has no weight of its own); set the lm_head&apos;s &quot;tied&quot; to false</source>
        <translation>--tp-head %1 拆分语言模型输出头的列，但此模型的输出头与 token 嵌入共享权重（没有自己的权重）；请把 lm_head 的 &quot;tied&quot; 设为 false</translation>
    </message>
</context>
<context>
    <name>tp_head.too_few_outputs</name>
    <message>
        <source>--tp-head %1: the head has only %2 outputs, fewer than the ranks; use at most %2 ranks</source>
        <translation>--tp-head %1：输出头只有 %2 个输出，少于 rank 数；最多使用 %2 个 rank</translation>
    </message>
</context>
<context>
    <name>train.bad_label</name>
    <message>
        <source>label %1 in row %2 of step %3 is outside [0, %4): the data&apos;s labels do not match the model&apos;s classes; check num_classes and the data set</source>
        <translation>第 %3 步第 %2 行的标签 %1 超出 [0, %4)：数据的标签与模型的类别不符；请检查 num_classes 和数据集</translation>
    </message>
</context>
<context>
    <name>train.jsonl_tp_head</name>
    <message>
        <source>instruction data (jsonl:) cannot train with a split head yet (its loss skips the prompt&apos;s tokens); leave out --tp-head</source>
        <translation>指令数据（jsonl:）暂不能与拆分输出头一起训练（其损失跳过提示部分的 token）；请去掉 --tp-head</translation>
    </message>
</context>
<context>
    <name>train.loss_not_finite</name>
    <message>
        <source>The loss became %1 at step %2; training cannot continue. Lower the learning rate (now %3, --lr), use a warm-up (--warmup), clip the gradients (--grad-clip 1) or check the data</source>
        <translation>损失在第 %2 步变为 %1，训练无法继续。请降低学习率（当前为 %3，--lr）、使用预热（--warmup）、裁剪梯度（--grad-clip 1）或检查数据</translation>
    </message>
</context>
<context>
    <name>train.no_full_batch</name>
    <message>
        <source>&apos;%1&apos; has %2 training samples, fewer than one batch of %3 (several ranks train full batches only); lower --batch or use more samples (--train-limit)</source>
        <translation>“%1”只有 %2 个训练样本，不足一个 %3 的批次（多个 rank 只训练完整批次）；请调小 --batch 或使用更多样本（--train-limit）</translation>
    </message>
</context>
<context>
    <name>train.rank_devices_short</name>
    <message>
        <source>--device %1 lists %2 GPU(s) but %3 ranks run on this machine; list one GPU per rank</source>
        <translation>--device %1 列出了 %2 块 GPU，但本机上运行 %3 个 rank；请为每个 rank 列出一块 GPU</translation>
    </message>
</context>
<context>
    <name>train.rank_gpu_failed</name>
    <message>
        <source>rank %1: %2; give every rank --device cpu, or --device cuda to skip the self-test</source>
        <translation>rank %1：%2；请为每个 rank 指定 --device cpu，或用 --device cuda 跳过自检</translation>
    </message>
</context>
<context>
    <name>train.rank_gpus_short</name>
    <message>
        <source>%1 ranks run on this machine but it has %2 GPUs; start at most %2 ranks here, or give each rank one GPU (CUDA_VISIBLE_DEVICES)</source>
        <translation>本机运行 %1 个 rank，但只有 %2 块 GPU；请在本机最多启动 %2 个 rank，或为每个 rank 指定一块 GPU（CUDA_VISIBLE_DEVICES）</translation>
    </message>
</context>
<context>
    <name>train.ranks_tokens_differ</name>
    <message>
        <source>the ranks read different text or built different tokenizers (%1 training tokens on rank %2); give every rank the same --data file and --tokenizer, and do not change the file while the run starts</source>
        <translation>各 rank 读到的文本不同或构建的分词器不同（rank %2 上有 %1 个训练 token）；请给每个 rank 相同的 --data 文件和 --tokenizer，并且在运行启动期间不要修改该文件</translation>
    </message>
</context>
<context>
    <name>train.text_needs_lm</name>
    <message>
        <source>&apos;%1&apos; is text, but model &apos;%2&apos; does not take tokens; pick a language model (gpt-tiny, gpt-char, ...) or image data</source>
        <translation>“%1”是文本，但模型“%2”不接受 token；请选择语言模型（gpt-tiny、gpt-char……）或图像数据</translation>
    </message>
</context>
<context>
    <name>train.text_needs_text</name>
    <message>
        <source>model &apos;%1&apos; is a language model (it takes token ids) but &apos;%2&apos; is not text; use --data text:fortunes, text:FILE or jsonl:FILE</source>
        <translation>模型“%1”是语言模型（输入为 token id），但“%2”不是文本；请使用 --data text:fortunes、text:FILE 或 jsonl:FILE</translation>
    </message>
</context>
<context>
    <name>train.vocab_too_small</name>
    <message>
        <source>the %1 tokenizer has %2 tokens but model &apos;%3&apos; has a vocabulary of %4; set the token embedding&apos;s and lm_head&apos;s vocab_size (and num_classes) to at least %2</source>
        <translation>%1 分词器有 %2 个 token，而模型“%3”的词表大小为 %4；请把 token 嵌入和 lm_head 的 vocab_size（以及 num_classes）至少设为 %2</translation>
    </message>
</context>
<context>
    <name>weights.count_mismatch</name>
    <message>
        <source>%1 has %2 tensors and its names are not the model&apos;s, and the model has %3 tensors (weights, biases and batch-norm buffers), so they cannot be matched by order either; pick the model the file was trained for (--preset or --model)</source>
        <translation>%1 有 %2 个张量且其名称与模型的不同，而模型有 %3 个张量（权重、偏置和批归一化缓冲区），因此也无法按顺序匹配；请选择该文件训练时所用的模型（--preset 或 --model）</translation>
    </message>
</context>
<context>
    <name>weights.lora_merge</name>
    <message>
        <source>%1: the LoRA adapters of %2 do not fit its weight (f32 %3 with A %4 and B %5 expected); the file is damaged</source>
        <translation>%1：%2 的 LoRA 适配器与其权重不匹配（应为 f32 %3，A %4，B %5）；文件已损坏</translation>
    </message>
</context>
<context>
    <name>weights.lora_scale</name>
    <message>
        <source>%1 has LoRA adapters but no lora_scale in its metadata, so they cannot be merged into the weights; train with --lora to use them</source>
        <translation>%1 含有 LoRA 适配器，但元数据中没有 lora_scale，无法把它们合并进权重；请用 --lora 训练来使用它们</translation>
    </message>
</context>
<context>
    <name>weights.peft_base</name>
    <message>
        <source>%1: the adapter&apos;s base model &apos;%2&apos; (base_model_name_or_path in adapter_config.json) is not a Hugging Face model folder here; put the base model&apos;s folder there or correct the path</source>
        <translation>%1：适配器的基础模型“%2”（adapter_config.json 中的 base_model_name_or_path）在此处不是 Hugging Face 模型文件夹；请把基础模型文件夹放到那里，或修正路径</translation>
    </message>
</context>
<context>
    <name>weights.shape_mismatch</name>
    <message>
        <source>%1: its names are not the model&apos;s, and matched by order these tensors differ in shape (file vs model): %2; pick the model the file was trained for</source>
        <translation>%1：其名称与模型的不同，而按顺序匹配时这些张量的形状不同（文件 vs 模型）：%2；请选择该文件训练时所用的模型</translation>
    </message>
</context>
<context>
    <name>whatif.both</name>
    <message>
        <source>What-if: evaluating the written weights as trained and with %1 % of each weight tensor&apos;s smallest values set to zero, then stored as %2 (int8: a scale per output row; int4: a scale per %3 values)</source>
        <translation>假设分析：评估写出的权重，先按训练所得，再把每个权重张量中绝对值最小的 %1 % 置零并存为 %2（int8：每个输出行一个缩放因子；int4：每 %3 个值一个缩放因子）</translation>
    </message>
</context>
<context>
    <name>whatif.prune</name>
    <message>
        <source>What-if: evaluating the written weights as trained and with %1 % of each weight tensor&apos;s smallest values set to zero</source>
        <translation>假设分析：评估写出的权重，先按训练所得，再把每个权重张量中绝对值最小的 %1 % 置零</translation>
    </message>
</context>
<context>
    <name>whatif.quantize</name>
    <message>
        <source>What-if: evaluating the written weights as trained and stored as %1 (int8: a scale per output row; int4: a scale per %2 values)</source>
        <translation>假设分析：评估写出的权重，先按训练所得，再存为 %1（int8：每个输出行一个缩放因子；int4：每 %2 个值一个缩放因子）</translation>
    </message>
</context>
<context>
    <name>whatif.result</name>
    <message>
        <source>What-if: test accuracy %1 as trained, %2 after (%3 points) on %4 samples; the weights take %5 stored so instead of %6</source>
        <translation>假设分析：在 %4 个样本上，训练所得的测试准确率为 %1，变换后为 %2（%3 个百分点）；这样存储的权重占 %5，原为 %6</translation>
    </message>
</context>
<context>
    <name>whatif.result_tokens</name>
    <message>
        <source>What-if: validation loss %1 per token as trained, %2 after (%3; perplexity %4) over %5 tokens; the weights take %6 stored so instead of %7</source>
        <translation>假设分析：在 %5 个词元上，按训练所得的验证损失为每词元 %1，变换后为 %2（%3；困惑度 %4）；这样存储时权重占 %6，原为 %7</translation>
    </message>
</context>
</TS>
