// Weights in from PyTorch (issue 13): the seed article's model (conv1, conv2, fc1, fc2) is trained in
// PyTorch 1.13 on a few hundred Fashion-MNIST samples and saved as safetensors with DDP's "module."
// names, with torch's own names, and as bf16; `headroom eval --preset seed-cnn` on the same test samples
// prints PyTorch's own test accuracy (to 1e-3; bf16 to 0.02), after matching the names by order and
// printing the table. The reference is PyTorch's evaluation. Skipped where /usr/bin/python3 has no torch
// or the dataset is not installed. trainedWhatIf: `headroom train --prune --quantize` writes run.json
// final.compression, checked against PyTorch evaluating the run's weights with its own prune and rounding.
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QtTest>

#include <fstream>

#include "test_support.h"

namespace {

const char* kScript = R"PY(
import json, struct, sys
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
sys.path.insert(0, sys.argv[1] + "/bench")
from headroom_torch import load_fashion_mnist
out = sys.argv[2]
torch.manual_seed(0)
class Net(nn.Module):  # the seed article's model
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, 5)
        self.conv2 = nn.Conv2d(10, 20, 5)
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)
    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = x.flatten(1)
        return self.fc2(F.relu(self.fc1(x)))
tx, ty, vx, vy = load_fashion_mnist()
tx, ty, vx, vy = tx[:512], ty[:512], vx[:2000], vy[:2000]
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
for epoch in range(3):
    for i in range(0, 512, 32):
        opt.zero_grad()
        F.cross_entropy(net(tx[i:i + 32]), ty[i:i + 32]).backward()
        opt.step()
net.eval()
with torch.no_grad():
    acc = (net(vx).argmax(1) == vy).float().mean().item()
def save(path, sd, dtype="F32"):
    header, blobs, off = {}, [], 0
    for k in sorted(sd):  # alphabetical, as the safetensors package orders them
        t = sd[k].detach().contiguous()
        if dtype == "BF16":
            b = (t.float().numpy().view(np.uint32) >> 16).astype(np.uint16).tobytes()
        else:
            b = t.float().numpy().tobytes()
        header[k] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
sd = net.state_dict()
save(out + "/ddp.safetensors", {"module." + k: v for k, v in sd.items()})
save(out + "/torch.safetensors", sd)
save(out + "/bf16.safetensors", sd, "BF16")
print("torch_accuracy=%.6f" % acc)
# the compression what-ifs (nn/compression.h), done by PyTorch: l1_unstructured pruning of each weight
# tensor, then symmetric absmax quantisation (int8: a scale per output row; int4: per 64 values of a row)
import copy
import torch.nn.utils.prune as prune
def quantize(w, bits, group):
    rows = w.reshape(w.shape[0], -1)
    qmax = 127.0 if bits == 8 else 7.0
    g = rows.shape[1] if bits == 8 else group
    out = torch.empty_like(rows)
    for c0 in range(0, rows.shape[1], g):
        blk = rows[:, c0:c0 + g]
        s = blk.abs().amax(dim=1, keepdim=True) / qmax
        q = torch.where(s > 0, torch.round(blk / torch.where(s > 0, s, torch.ones_like(s))).clamp(-qmax, qmax),
                        torch.zeros_like(blk))
        out[:, c0:c0 + g] = q * s
    return out.reshape(w.shape)
for name, amount, bits in (("prune50_int8", 0.5, 8), ("int4", 0.0, 4), ("prune80", 0.8, 0)):
    m = copy.deepcopy(net)
    with torch.no_grad():
        for layer in (m.conv1, m.conv2, m.fc1, m.fc2):
            if amount > 0:
                prune.l1_unstructured(layer, "weight", amount=amount)
                prune.remove(layer, "weight")
            if bits:
                layer.weight.copy_(quantize(layer.weight, bits, 64))
        print("torch_%s=%.6f" % (name, (m(vx).argmax(1) == vy).float().mean().item()))
)PY";

const char* kTrainedScript = R"PY(
import json, struct, sys
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune
sys.path.insert(0, sys.argv[1] + "/bench")
from headroom_torch import load_fashion_mnist
path, amount, bits, limit = sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
class Net(nn.Module):  # seed-cnn, as PyTorch writes it
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, 5)
        self.conv2 = nn.Conv2d(10, 20, 5)
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)
    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        return self.fc2(F.relu(self.fc1(x.flatten(1))))
raw = open(path, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
header.pop("__metadata__", None)
tensors = []  # in the file's order (Headroom writes the state_dict in order)
for name, h in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
    a, b = h["data_offsets"]
    assert h["dtype"] == "F32"
    tensors.append(torch.from_numpy(np.frombuffer(raw[8 + n + a:8 + n + b], dtype=np.float32).copy()).reshape(h["shape"]))
net = Net()
with torch.no_grad():
    for p, t in zip(net.parameters(), tensors):
        assert p.shape == t.shape
        p.copy_(t)
_, _, vx, vy = load_fashion_mnist()
vx, vy = vx[:limit], vy[:limit]
net.eval()
with torch.no_grad():
    print("torch_before=%.6f" % (net(vx).argmax(1) == vy).float().mean().item())
    for layer in (net.conv1, net.conv2, net.fc1, net.fc2):
        if amount > 0:
            prune.l1_unstructured(layer, "weight", amount=amount)
            prune.remove(layer, "weight")
        if bits:
            w = layer.weight
            rows = w.reshape(w.shape[0], -1)
            qmax = 127.0 if bits == 8 else 7.0
            g = rows.shape[1] if bits == 8 else 64
            out = torch.empty_like(rows)
            for c0 in range(0, rows.shape[1], g):
                blk = rows[:, c0:c0 + g]
                s = blk.abs().amax(dim=1, keepdim=True) / qmax
                q = torch.where(s > 0, torch.round(blk / torch.where(s > 0, s, torch.ones_like(s))).clamp(-qmax, qmax),
                                torch.zeros_like(blk))
                out[:, c0:c0 + g] = q * s
            layer.weight.copy_(out.reshape(w.shape))
    print("torch_after=%.6f" % (net(vx).argmax(1) == vy).float().mean().item())
)PY";

struct Run {
    int code = -1;
    QString out, err;
};

Run run(const QString& program, const QStringList& args) {
    QProcess p;
    p.start(program, args);
    Run r;
    if (!p.waitForFinished(300000)) return r;
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

double value(const QString& text, const QString& key) {
    for (const QString& line : text.split(QLatin1Char('\n')))
        if (line.startsWith(key + QLatin1Char('='))) return line.mid(key.size() + 1).toDouble();
    return -1;
}

}  // namespace

class WeightsInTest : public QObject {
    Q_OBJECT

private slots:
    void pytorchAccuracy() {
        if (hrtest::fashion_mnist_dir().empty()) QSKIP("Fashion-MNIST is not installed (dataset-fashion-mnist)");
        if (run("/usr/bin/python3", {"-c", "import torch"}).code != 0) QSKIP("/usr/bin/python3 cannot import torch");
        const std::string dir = hrtest::temp_dir("weights-in-torch");
        const std::string script = dir + "/train.py";
        std::ofstream(script) << kScript;
        const Run py = run("/usr/bin/python3", {QString::fromStdString(script), hrtest::qsource_path(),
                                                QString::fromStdString(dir)});
        QVERIFY2(py.code == 0, qPrintable(py.err));
        const double torchAcc = value(py.out, QStringLiteral("torch_accuracy"));
        QVERIFY2(torchAcc > 0.5, qPrintable(py.out));  // it learned something, so the comparison means something
        const QString exe = hrtest::qbinary_path("headroom");
        for (const char* file : {"ddp", "torch", "bf16"}) {
            const Run e = run(exe, {"eval", "--weights", QString::fromStdString(dir) + "/" + file + ".safetensors",
                                    "--preset", "seed-cnn", "--data", "fashion-mnist", "--test-limit", "2000",
                                    "--device", "cpu", "--threads", "2"});
            QVERIFY2(e.code == 0, qPrintable(e.err));
            const double acc = value(e.out, QStringLiteral("test_accuracy"));
            qInfo("%s: headroom %.4f, torch %.4f", file, acc, torchAcc);
            QVERIFY2(std::abs(acc - torchAcc) <= (std::string(file) == "bf16" ? 0.02 : 1e-3), qPrintable(e.out + e.err));
            // the match by order is printed as a table
            QVERIFY2(e.err.contains(QStringLiteral("matched by order")), qPrintable(e.err));
            QVERIFY2(e.err.contains(QStringLiteral("conv1.weight")) && e.err.contains(QStringLiteral("0.weight")), qPrintable(e.err));
            if (std::string(file) == "ddp") QVERIFY2(e.err.contains(QStringLiteral("module.")), qPrintable(e.err));
        }
        // the what-ifs: Headroom's pruning and quantisation against PyTorch's (its prune module, its rounding),
        // each measured by PyTorch's own evaluation; the file is not changed
        const QString weights = QString::fromStdString(dir) + "/torch.safetensors";
        const QByteArray fileBefore = [&] { QFile f(weights); f.open(QIODevice::ReadOnly); return f.readAll(); }();
        const std::vector<std::pair<QString, QStringList>> whatIfs = {
            {QStringLiteral("prune50_int8"), {"--prune", "0.5", "--quantize", "int8"}},
            {QStringLiteral("int4"), {"--quantize", "int4"}},
            {QStringLiteral("prune80"), {"--prune", "0.8"}}};
        for (const auto& [name, flags] : whatIfs) {
            const double ref = value(py.out, QStringLiteral("torch_") + name);
            QVERIFY2(ref > 0, qPrintable(py.out));
            const Run e = run(exe, QStringList{"eval", "--weights", weights, "--preset", "seed-cnn", "--data", "fashion-mnist",
                                               "--test-limit", "2000", "--device", "cpu", "--threads", "2"} + flags);
            QVERIFY2(e.code == 0, qPrintable(e.err));
            const double after = value(e.out, QStringLiteral("test_accuracy_after"));
            qInfo("%s: headroom %.4f, torch %.4f", qPrintable(name), after, ref);
            QVERIFY2(std::abs(after - ref) <= 1e-3, qPrintable(e.out + e.err));
            // seed-cnn's weight tensors: 10x25, 20x250, 50x320, 10x50 = 21,750 values; biases 90 (360 B)
            QCOMPARE(value(e.out, QStringLiteral("weights_bytes")), 4.0 * 21750 + 360);
            if (name == QLatin1String("int4"))  // half a byte a value, and 4 bytes for each of 10 + 80 + 250 + 10 scales
                QCOMPARE(value(e.out, QStringLiteral("weights_bytes_after")), 21750.0 / 2 + 4.0 * 350 + 360);
            QVERIFY2(value(e.out, QStringLiteral("weights_bytes_after")) < 4.0 * 21750, qPrintable(e.out));
        }
        { QFile f(weights); f.open(QIODevice::ReadOnly); QCOMPARE(f.readAll(), fileBefore); }
        // a bad what-if: one message, exit code 2
        const Run badQ = run(exe, {"eval", "--weights", weights, "--quantize", "int3", "--device", "cpu"});
        QCOMPARE(badQ.code, 2);
        QVERIFY2(badQ.err.contains(QStringLiteral("int8")), qPrintable(badQ.err));
        // a model that does not fit: refused with exit code 2, naming the tensors
        const Run bad = run(exe, {"eval", "--weights", QString::fromStdString(dir) + "/torch.safetensors", "--preset",
                                  "lenet5", "--data", "fashion-mnist", "--test-limit", "10", "--device", "cpu"});
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains(QStringLiteral("conv1.weight")) || bad.err.contains(QStringLiteral("tensors")), qPrintable(bad.err));
    }

    // `headroom train --prune --quantize` (issue 23 item 4): the run's written weights, evaluated by PyTorch as
    // trained and after PyTorch's own pruning and rounding, give run.json's final.compression figures
    void trainedWhatIf() {
        if (hrtest::fashion_mnist_dir().empty()) QSKIP("Fashion-MNIST is not installed (dataset-fashion-mnist)");
        if (run("/usr/bin/python3", {"-c", "import torch"}).code != 0) QSKIP("/usr/bin/python3 cannot import torch");
        const std::string dir = hrtest::temp_dir("weights-in-trained");
        const QString out = QString::fromStdString(dir) + "/run";
        const QString exe = hrtest::qbinary_path("headroom");
        const Run t = run(exe, {"train", "--preset", "seed-cnn", "--data", "fashion-mnist", "--steps", "300",
                                "--test-limit", "2000", "--device", "cpu", "--threads", "2",
                                "--prune", "0.6", "--quantize", "int4", "--out", out, "--no-history"});
        QVERIFY2(t.code == 0, qPrintable(t.out + t.err));
        QVERIFY2(t.err.contains(QStringLiteral("What-if: test accuracy")), qPrintable(t.err));
        QFile f(out + "/run.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject record = QJsonDocument::fromJson(f.readAll()).object();
        const QJsonObject c = record.value("final").toObject().value("compression").toObject();
        QVERIFY2(!c.isEmpty(), "run.json has no final.compression");
        QCOMPARE(c.value("prune").toDouble(), 0.6);
        QCOMPARE(c.value("quantize").toString(), QStringLiteral("int4"));
        QCOMPARE(c.value("test_samples").toInteger(), qint64(2000));
        QCOMPARE(record.value("config").toObject().value("what_if").toObject().value("quantize").toString(), QStringLiteral("int4"));
        // the what-if's "before" is the run's own final evaluation of the same weights
        QVERIFY(std::abs(c.value("test_accuracy_before").toDouble() - record.value("final").toObject().value("test_accuracy").toDouble()) <= 1e-9);
        const std::string script = dir + "/check.py";
        std::ofstream(script) << kTrainedScript;
        const Run py = run("/usr/bin/python3", {QString::fromStdString(script), hrtest::qsource_path(),
                                                out + "/model.safetensors", "0.6", "4", "2000"});
        QVERIFY2(py.code == 0, qPrintable(py.err));
        const double before = value(py.out, QStringLiteral("torch_before")), after = value(py.out, QStringLiteral("torch_after"));
        qInfo("trained what-if: headroom %.4f -> %.4f, torch %.4f -> %.4f", c.value("test_accuracy_before").toDouble(),
              c.value("test_accuracy_after").toDouble(), before, after);
        QVERIFY2(before > 0.5, qPrintable(py.out));
        QVERIFY2(std::abs(c.value("test_accuracy_before").toDouble() - before) <= 1e-3, qPrintable(py.out));
        QVERIFY2(std::abs(c.value("test_accuracy_after").toDouble() - after) <= 1e-3, qPrintable(py.out));
        // 60 % pruned then int4: a bitmask and the non-zeros at 4 bits, a scale per 64 values; biases as they are
        // round(0.6 n) per tensor pruned (conv1 250, conv2 5000, fc1 16000, fc2 500 values), and int4 rounds more to 0
        QVERIFY2(c.value("zeros").toInteger() >= 150 + 3000 + 9600 + 300, qPrintable(QString::number(c.value("zeros").toInteger())));
        QCOMPARE(c.value("weights_bytes").toInteger(), qint64(4 * 21750 + 360));
        QVERIFY(c.value("weights_bytes_after").toInteger() < c.value("weights_bytes").toInteger() / 5);
        // the planner's what-if, from the shapes before training: exactly round(0.6 n) zeros a tensor, so the
        // non-zeros 100 + 2000 + 6400 + 200 at 4 bits (4350 B), 350 scales (1400 B), the bitmasks 32 + 625 + 2000
        // + 63 B and the biases 360 B; the trained weights, with int4's extra zeros, take at most that
        const Run plan = run(exe, {"plan", "--preset", "seed-cnn", "--prune", "0.6", "--quantize", "int4", "--json"});
        QVERIFY2(plan.code == 0, qPrintable(plan.err));
        const QJsonObject pc = QJsonDocument::fromJson(plan.out.toUtf8()).object().value("compression").toObject();
        QCOMPARE(pc.value("weights_bytes").toInteger(), qint64(4 * 21750 + 360));
        QCOMPARE(pc.value("weights_bytes_after").toInteger(), qint64(4350 + 1400 + 2720 + 360));
        QVERIFY(c.value("weights_bytes_after").toInteger() <= pc.value("weights_bytes_after").toInteger());
        const Run planText = run(exe, {"plan", "--preset", "seed-cnn", "--prune", "0.6", "--quantize", "int4"});
        QVERIFY2(planText.out.contains(QStringLiteral("what-if (60 % pruned, int4")), qPrintable(planText.out));
    }

    // --init-from on layouts across ranks (issue 23): a split head takes its rows of the file's head, pipeline
    // stages their layers (each from a model of the whole spec). A run that cannot move the weights (one step
    // at learning rate 1e-20) evaluates the file as `headroom eval` does, on 2 CPU ranks either way.
    void initFromOnLayoutsAcrossRanks() {
        if (hrtest::fashion_mnist_dir().empty()) QSKIP("Fashion-MNIST is not installed (dataset-fashion-mnist)");
        if (QStandardPaths::findExecutable(QStringLiteral("mpirun")).isEmpty()) QSKIP("no mpirun on PATH");
        const QString dir = QString::fromStdString(hrtest::temp_dir("weights-in-layouts"));
        const QString exe = hrtest::qbinary_path("headroom");
        const QStringList common = {"--preset", "mlp", "--data", "fashion-mnist", "--test-limit", "2000", "--device", "cpu",
                                    "--threads", "1", "--no-history", "--quiet"};
        const Run base = run(exe, QStringList{"train", "--steps", "30", "--out", dir + "/base"} + common);
        QVERIFY2(base.code == 0, qPrintable(base.err));
        const QString weights = dir + "/base/model.safetensors";
        const Run e = run(exe, {"eval", "--weights", weights, "--data", "fashion-mnist", "--test-limit", "2000",
                                "--device", "cpu", "--threads", "1"});
        QVERIFY2(e.code == 0, qPrintable(e.err));
        const double want = value(e.out, QStringLiteral("test_loss"));
        QVERIFY(want > 0);
        for (const QStringList& layout : {QStringList{"--tp-head", "2"}, QStringList{"--pipeline", "2"}}) {
            const Run r = run(exe, QStringList{"train", "--steps", "1", "--lr", "1e-20", "--ranks", "2", "--init-from",
                                               weights, "--out", dir + "/" + layout.first().mid(2)} + layout + common);
            QVERIFY2(r.code == 0, qPrintable(r.err));
            QFile f(dir + "/" + layout.first().mid(2) + "/run.json");
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QJsonObject record = QJsonDocument::fromJson(f.readAll()).object();
            const double got = record.value("final").toObject().value("test_loss").toDouble();
            qInfo("%s 2: test loss %.7f, headroom eval %.7f", qPrintable(layout.first()), got, want);
            QVERIFY2(std::abs(got - want) <= 1e-6 * want, qPrintable(layout.join(' ')));
            QCOMPARE(record.value("distributed").toObject().value("world_size").toInt(), 2);
        }
    }
};

QTEST_GUILESS_MAIN(WeightsInTest)
#include "test_weights_in.moc"
