#include "gui/RunsView.h"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QShortcut>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>
#include <cmath>

#include "charts/LiveChart.h"
#include "exporters/onnx/onnx_export.h"
#include "gui/ExportDialog.h"
#include "memory/allocator.h"
#include "base/error.h"
#include "session/RunController.h"
#include "session/RunText.h"
#include "store/run_store.h"
#include "train/resume.h"

namespace hrapp {

namespace {
constexpr int kMaxChartPoints = 5000;  // per series: longer runs are thinned evenly before drawing

QColor runColor(int i) {
    static const QColor colors[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
                                    QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                    QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f)};
    return colors[i % 8];
}

// Evenly thinned copy with at most `max` points (the last point kept).
void thin(QVector<double>& x, QVector<double>& y, int max) {
    const int n = int(x.size());
    if (n <= max) return;
    QVector<double> tx, ty;
    tx.reserve(max + 1);
    ty.reserve(max + 1);
    const double stride = double(n) / max;
    for (double i = 0; int(i) < n; i += stride) {
        tx << x[int(i)];
        ty << y[int(i)];
    }
    if (tx.last() != x.last()) {
        tx << x.last();
        ty << y.last();
    }
    x.swap(tx);
    y.swap(ty);
}

void dropNaN(QVector<double>& x, QVector<double>& y) {
    QVector<double> tx, ty;
    for (int i = 0; i < x.size(); ++i)
        if (std::isfinite(y[i])) {
            tx << x[i];
            ty << y[i];
        }
    x.swap(tx);
    y.swap(ty);
}

QString formatDuration(qint64 s) {
    if (s < 0) return QStringLiteral("—");
    if (s >= 3600) return QStringLiteral("%1:%2:%3").arg(s / 3600).arg((s / 60) % 60, 2, 10, QLatin1Char('0')).arg(s % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}
}  // namespace

RunsView::RunsView(RunStore* store, QWidget* parent) : QWidget(parent), m_store(store) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    outer->setSpacing(6);

    auto* bar = new QHBoxLayout;
    m_filter = new QLineEdit(this);
    m_filter->setObjectName(QStringLiteral("runFilter"));
    m_filter->setPlaceholderText(tr("Filter by name, model, data or device"));
    m_filter->setClearButtonEnabled(true);
    m_status = new QComboBox(this);
    m_status->setObjectName(QStringLiteral("runStatusFilter"));
    m_status->addItem(tr("All statuses"), QString());
    m_status->addItem(tr("Finished"), QStringLiteral("finished"));
    m_status->addItem(tr("Stopped"), QStringLiteral("stopped"));
    m_status->addItem(tr("Failed"), QStringLiteral("failed"));
    m_status->addItem(tr("Running"), QStringLiteral("running"));
    bar->addWidget(m_filter, 1);
    bar->addWidget(m_status);
    outer->addLayout(bar);

    auto* split = new QSplitter(Qt::Vertical, this);
    split->setChildrenCollapsible(false);
    auto* top = new QWidget(split);
    auto* tl = new QVBoxLayout(top);
    tl->setContentsMargins(0, 0, 0, 0);
    tl->setSpacing(4);
    m_table = new QTableWidget(0, ColumnCount, top);
    m_table->setObjectName(QStringLiteral("runsTable"));
    m_table->setHorizontalHeaderLabels({tr("Name"), tr("Status"), tr("Started"), tr("Duration"), tr("Device"), tr("Test accuracy"),
                                        tr("Continued")});
    m_table->verticalHeader()->setVisible(false);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->setTextElideMode(Qt::ElideRight);
    // Names in full (sized to the longest after each reload, up to half the table); the device, the
    // longest text, takes what is left and is elided (its tooltip has it whole).
    QHeaderView* h = m_table->horizontalHeader();
    h->setSectionResizeMode(QHeaderView::Interactive);
    h->setSectionResizeMode(StatusColumn, QHeaderView::ResizeToContents);
    h->setSectionResizeMode(StartedColumn, QHeaderView::ResizeToContents);
    h->setSectionResizeMode(DurationColumn, QHeaderView::ResizeToContents);
    h->setSectionResizeMode(AccuracyColumn, QHeaderView::ResizeToContents);
    h->setSectionResizeMode(ContinuedColumn, QHeaderView::ResizeToContents);
    h->setSectionResizeMode(DeviceColumn, QHeaderView::Stretch);
    m_table->setColumnWidth(NameColumn, 220);
    m_table->setToolTip(tr("Select one run to see its charts, several to compare them; double-click a name to rename"));
    tl->addWidget(m_table, 1);
    m_empty = new QLabel(tr("No runs recorded yet. Every run started with Start (F5) or `headroom train` is kept here."), top);
    m_empty->setObjectName(QStringLiteral("runsEmptyLabel"));
    m_empty->setWordWrap(true);
    m_empty->setForegroundRole(QPalette::PlaceholderText);
    tl->addWidget(m_empty);

    auto* buttons = new QHBoxLayout;
    m_renameButton = new QPushButton(tr("Rename"), top);
    m_deleteButton = new QPushButton(tr("Delete…"), top);
    m_loadButton = new QPushButton(tr("Load into builder"), top);
    m_loadButton->setToolTip(tr("Put the run's model and training settings back into the builder and setup panels"));
    m_exportButton = new QPushButton(tr("Export report…"), top);
    m_continueButton = new QPushButton(tr("Continue training…"), top);
    m_continueButton->setObjectName(QStringLiteral("continueButton"));
    m_chartNote = new QLabel(top);
    m_chartNote->setForegroundRole(QPalette::PlaceholderText);
    buttons->addWidget(m_renameButton);
    buttons->addWidget(m_deleteButton);
    buttons->addSpacing(12);
    buttons->addWidget(m_loadButton);
    buttons->addWidget(m_exportButton);
    buttons->addWidget(m_continueButton);
    buttons->addSpacing(12);
    buttons->addWidget(m_chartNote, 1);
    tl->addLayout(buttons);

    auto* chartsBox = new QWidget(split);
    auto* grid = new QGridLayout(chartsBox);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setSpacing(6);
    auto make = [this](const char* name, const QString& title, const QString& x, const QString& y) {
        auto* c = new hrw::LiveChart(this);
        c->setObjectName(QString::fromLatin1(name));
        c->setTitle(title);
        c->setAxisLabels(x, y);
        c->setMaxPointsPerSeries(kMaxChartPoints * 2);
        connect(c, &hrw::LiveChart::saveRequested, this, [this, c] { emit saveChartRequested(c); });
        return c;
    };
    m_loss = make("runLossChart", tr("Training loss"), tr("step"), tr("loss"));
    m_accuracy = make("runAccuracyChart", tr("Test accuracy"), tr("epoch"), tr("accuracy (%)"));
    m_throughput = make("runThroughputChart", tr("Throughput"), tr("step"), tr("images/s"));
    m_memory = make("runMemoryChart", tr("Memory allocated (ledger)"), tr("step"), tr("MiB"));
    m_accuracy->setIntegerX(true);
    m_throughput->setIncludeZero(true);
    m_memory->setIncludeZero(true);
    grid->addWidget(m_loss, 0, 0);
    grid->addWidget(m_accuracy, 0, 1);
    grid->addWidget(m_throughput, 1, 0);
    grid->addWidget(m_memory, 1, 1);
    split->addWidget(top);
    split->addWidget(chartsBox);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    outer->addWidget(split, 1);

    connect(m_filter, &QLineEdit::textChanged, this, &RunsView::reload);
    connect(m_status, &QComboBox::currentIndexChanged, this, &RunsView::reload);
    connect(m_table, &QTableWidget::itemSelectionChanged, this, &RunsView::onSelectionChanged);
    connect(m_table, &QTableWidget::itemChanged, this, &RunsView::onItemChanged);
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        const QList<qint64> ids = selectedRunIds();
        if (ids.isEmpty()) return;
        QMenu menu(this);
        if (ids.size() == 1) {
            menu.addAction(tr("Rename"), this, &RunsView::renameSelected);
            menu.addAction(tr("Load into builder"), this, [this, ids] { emit loadRequested(ids.first()); });
            menu.addAction(tr("Export report…"), this, [this, ids] { emit exportRequested(ids.first()); });
            // Export model: the same exports as headroom export, each in a dialog (gui/ExportDialog.h)
            QMenu* exports = menu.addMenu(tr("Export model"));
            exports->setObjectName(QStringLiteral("exportModelMenu"));
            for (ExportKind k : {ExportKind::HfFolder, ExportKind::PeftAdapter, ExportKind::Gguf, ExportKind::Onnx})
                exports->addAction(ExportDialog::kindTitle(k) + QStringLiteral("…"), this,
                                   [this, ids, k] { openExport(ids.first(), k); });
            QAction* cont = menu.addAction(tr("Continue training…"), this, &RunsView::continueSelected);
            const QString why = continueBlocker(ids.first());
            cont->setEnabled(why.isEmpty());
            cont->setToolTip(why);
            // a new run from this run's weights (--init-from its folder), in the window
            QAction* tune = menu.addAction(tr("Fine-tune from this run"), this, [this, ids] { emit fineTuneRequested(ids.first()); });
            tune->setObjectName(QStringLiteral("fineTuneAction"));
            tune->setToolTip(tr("Load this run's model and settings and start the next run from the weights it wrote"));
            tune->setEnabled(m_activeRun == 0);
            menu.addSeparator();
        }
        menu.addAction(ids.size() == 1 ? tr("Delete…") : tr("Delete %1 runs…").arg(ids.size()), this, &RunsView::deleteSelected);
        menu.exec(m_table->viewport()->mapToGlobal(pos));
    });
    auto* del = new QShortcut(QKeySequence::Delete, m_table, nullptr, nullptr, Qt::WidgetShortcut);
    connect(del, &QShortcut::activated, this, &RunsView::deleteSelected);
    m_renameButton->setToolTip(tr("Rename the selected run (F2, or double-click its name)"));
    m_deleteButton->setToolTip(tr("Delete the selected runs and everything recorded for them (Delete)"));
    connect(m_renameButton, &QPushButton::clicked, this, &RunsView::renameSelected);
    connect(m_deleteButton, &QPushButton::clicked, this, &RunsView::deleteSelected);
    connect(m_loadButton, &QPushButton::clicked, this, [this] {
        const QList<qint64> ids = selectedRunIds();
        if (ids.size() == 1) emit loadRequested(ids.first());
    });
    connect(m_continueButton, &QPushButton::clicked, this, &RunsView::continueSelected);
    connect(m_exportButton, &QPushButton::clicked, this, [this] {
        const QList<qint64> ids = selectedRunIds();
        if (ids.size() == 1) emit exportRequested(ids.first());
    });
    if (m_store) {
        // Coalesce bursts (a finished run, a rename) into one reload.
        auto* timer = new QTimer(this);
        timer->setSingleShot(true);
        timer->setInterval(50);
        connect(timer, &QTimer::timeout, this, &RunsView::reload);
        connect(m_store, &RunStore::runsChanged, timer, qOverload<>(&QTimer::start));
    }
    // The duration of a run in progress counts up (in place: an edit in progress is not disturbed).
    auto* ticker = new QTimer(this);
    ticker->setInterval(1000);
    connect(ticker, &QTimer::timeout, this, [this] {
        const QDateTime now = QDateTime::currentDateTimeUtc();
        for (int r = 0; r < m_table->rowCount(); ++r) {
            QTableWidgetItem* it = m_table->item(r, DurationColumn);
            const QDateTime created = it ? it->data(Qt::UserRole + 1).toDateTime() : QDateTime();
            if (created.isValid()) it->setText(formatDuration(created.secsTo(now)));
        }
    });
    ticker->start();
    reload();
}

void RunsView::fitNameColumn() {
    const int wanted = std::max(static_cast<QAbstractItemView*>(m_table)->sizeHintForColumn(NameColumn),
                                m_table->horizontalHeader()->sectionSizeHint(NameColumn)) + 12;
    const int cap = std::max(160, m_table->width() / 2);
    m_table->setColumnWidth(NameColumn, std::min(wanted, cap));
}

void RunsView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    QTimer::singleShot(0, this, &RunsView::fitNameColumn);  // after the layout has sized the table
}

QList<hrw::LiveChart*> RunsView::charts() const { return {m_loss, m_accuracy, m_throughput, m_memory}; }

QString RunsView::statusText(const QString& status) const {
    if (status == QLatin1String("finished")) return tr("Finished");
    if (status == QLatin1String("stopped")) return tr("Stopped");
    if (status == QLatin1String("failed")) return tr("Failed");
    if (status == QLatin1String("running")) return tr("Running");
    return status;
}

void RunsView::reload() {
    const QList<qint64> keep = selectedRunIds();
    QVector<RunInfo> runs;
    if (m_store && m_store->isOpen()) {
        RunFilter f;
        f.text = m_filter->text().trimmed();
        const QString st = m_status->currentData().toString();
        if (!st.isEmpty()) f.statuses << st;
        runs = m_store->listRuns(f);
    }
    m_filling = true;
    m_table->setSortingEnabled(false);
    m_table->clearContents();
    m_table->setRowCount(int(runs.size()));
    const QColor failedColor(0xc6, 0x28, 0x28);
    for (int r = 0; r < runs.size(); ++r) {
        const RunInfo& info = runs[r];
        auto item = [&](int col, const QString& text, bool editable = false) {
            auto* it = new QTableWidgetItem(text);
            it->setData(Qt::UserRole, info.id);
            Qt::ItemFlags fl = Qt::ItemIsSelectable | Qt::ItemIsEnabled;
            if (editable) fl |= Qt::ItemIsEditable;
            it->setFlags(fl);
            m_table->setItem(r, col, it);
            return it;
        };
        QTableWidgetItem* name = item(NameColumn, info.name, true);
        name->setToolTip(tr("Run %1: %2 on %3").arg(info.id).arg(info.modelName, info.data));
        QTableWidgetItem* status = item(StatusColumn, statusText(info.status));
        if (info.status == QLatin1String("failed")) {
            status->setForeground(failedColor);
            status->setToolTip(info.error);
        }
        item(StartedColumn, info.created.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")));
        const QDateTime end = info.finished.isValid() ? info.finished : QDateTime::currentDateTimeUtc();
        QTableWidgetItem* dur = item(DurationColumn, formatDuration(info.created.secsTo(end)));
        if (!info.finished.isValid()) dur->setData(Qt::UserRole + 1, info.created);  // ticks (see the timer)
        dur->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        QTableWidgetItem* dev = item(DeviceColumn, info.device);
        dev->setToolTip(info.device);
        const QJsonValue acc = info.finalMetrics.value(QStringLiteral("test_accuracy"));
        QTableWidgetItem* a = item(AccuracyColumn, acc.isDouble() && info.status != QLatin1String("failed")
                                                      ? QStringLiteral("%1 %").arg(acc.toDouble() * 100.0, 0, 'f', 2)
                                                      : QStringLiteral("—"));
        a->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        QStringList links;  // the history's links: the run this one continues, the runs continuing it
        if (info.continuesRunId > 0) links << tr("continues #%1").arg(info.continuesRunId);
        for (qint64 by : info.continuedBy) links << tr("continued in #%1").arg(by);
        QTableWidgetItem* cont = item(ContinuedColumn, links.join(QStringLiteral("; ")));
        if (!links.isEmpty())
            cont->setToolTip(tr("Continue training links a stopped or failed run to the run that trained it on "
                                "from its checkpoint, in the same folder"));
    }
    m_filling = false;
    fitNameColumn();
    m_empty->setVisible(runs.isEmpty());
    if (runs.isEmpty() && m_store && m_store->isOpen() && (!m_filter->text().isEmpty() || m_status->currentIndex() > 0))
        m_empty->setText(tr("No run matches the filter."));
    else if (!m_store || !m_store->isOpen())
        m_empty->setText(tr("The run history is not available: %1").arg(m_store ? m_store->lastError() : QString()));
    else
        m_empty->setText(tr("No runs recorded yet. Every run started with Start (F5) or `headroom train` is kept here."));
    m_shown.clear();  // the store changed: redraw the selected runs' charts (a run may have finished)
    selectRuns(keep);
}

int RunsView::rowCount() const { return m_table->rowCount(); }

qint64 RunsView::runIdAt(int row) const {
    QTableWidgetItem* it = m_table->item(row, NameColumn);
    return it ? it->data(Qt::UserRole).toLongLong() : 0;
}

int RunsView::rowOf(qint64 runId) const {
    for (int r = 0; r < m_table->rowCount(); ++r)
        if (runIdAt(r) == runId) return r;
    return -1;
}

QList<qint64> RunsView::selectedRunIds() const {
    QList<qint64> ids;
    for (int r = 0; r < m_table->rowCount(); ++r) {
        QTableWidgetItem* it = m_table->item(r, NameColumn);
        if (it && it->isSelected()) ids << runIdAt(r);
    }
    return ids;
}

void RunsView::selectRuns(const QList<qint64>& ids) {
    QSignalBlocker block(m_table);
    m_table->clearSelection();
    QItemSelection sel;
    for (qint64 id : ids) {
        const int r = rowOf(id);
        if (r >= 0) sel.select(m_table->model()->index(r, 0), m_table->model()->index(r, ColumnCount - 1));
    }
    m_table->selectionModel()->select(sel, QItemSelectionModel::Select);
    block.unblock();
    onSelectionChanged();
}

void RunsView::setActiveRun(qint64 runId) {
    m_activeRun = runId;
    updateButtons();
}

void RunsView::updateButtons() {
    const QList<qint64> ids = selectedRunIds();
    m_renameButton->setEnabled(ids.size() == 1);
    m_deleteButton->setEnabled(!ids.isEmpty());
    m_loadButton->setEnabled(ids.size() == 1);
    m_exportButton->setEnabled(ids.size() == 1);
    const QString why = ids.size() == 1 ? continueBlocker(ids.first())
                                        : tr("Select one stopped or failed run to continue it from its last checkpoint");
    m_continueButton->setEnabled(why.isEmpty());
    if (!why.isEmpty()) {
        m_continueButton->setToolTip(why);
    } else {
        const auto info = m_store->run(ids.first());
        QString step;
        try {
            step = QString::number(hr::read_latest_checkpoint_json(info->outDir.toStdString()).cursor.step);
        } catch (const hr::Error&) {
            step = QStringLiteral("?");
        }
        m_continueButton->setToolTip(tr("Train this run on from its checkpoint at step %1 in %2, to a total length you "
                                        "choose (unlike Resume, which goes on after Pause in a run in progress)")
                                         .arg(step, info->outDir));
    }
}

QString RunsView::continueBlocker(qint64 runId) const {
    const auto info = m_store && m_store->isOpen() ? m_store->run(runId) : std::nullopt;
    if (!info) return tr("The run is not in the history");
    if (m_activeRun != 0) return tr("A run is in progress; stop it first");
    if (info->status == QLatin1String("running")) return tr("The run is still in progress");
    if (info->status == QLatin1String("finished"))
        return tr("The run finished its length; Continue training is for a stopped or failed run. To train it "
                  "further, start a new run from its weights: Fine-tune from this run (its menu)");
    if (!info->continuedBy.isEmpty())
        return tr("Run #%1 already continued this run from its folder's checkpoint; continue that run instead")
            .arg(info->continuedBy.last());
    if (info->outDir.isEmpty()) return tr("The run kept no output folder, so there is no checkpoint to continue from");
    if (!QFileInfo(info->outDir).isDir())
        return tr("The run's folder %1 is gone, and its checkpoints with it").arg(info->outDir);
    if (!hr::has_checkpoint(info->outDir.toStdString())) {
        if (QFileInfo::exists(info->outDir + QStringLiteral("/run.json"))) {
            try {
                (void)hr::read_run_config(info->outDir.toStdString());  // a folder without config.json says so here
            } catch (const hr::Error& e) {
                return messageText(e.message());
            }
        }
        return tr("%1 holds no checkpoint: the run ended before its first one (--save-every); start it again")
            .arg(info->outDir);
    }
    return {};
}

QString RunsView::exportOnnx(qint64 runId, const QString& file, bool ask) {
    auto tell = [&](QMessageBox::Icon icon, const QString& text) {
        if (ask) {
            auto* box = new QMessageBox(icon, tr("Export as ONNX"), text, QMessageBox::Ok, this);
            box->setAttribute(Qt::WA_DeleteOnClose);
            box->open();
        }
        return text;
    };
    const auto info = m_store && m_store->isOpen() ? m_store->run(runId) : std::nullopt;
    if (!info) return tell(QMessageBox::Warning, tr("The run is not in the history"));
    if (info->outDir.isEmpty() || !QFileInfo::exists(info->outDir + QStringLiteral("/model.safetensors")))
        return tell(QMessageBox::Warning, tr("The run left no model.safetensors in an output folder, so there is no "
                                             "model to export"));
    QString target = file;
    if (target.isEmpty()) {
        if (!ask) return {};
        target = QFileDialog::getSaveFileName(this, tr("Export as ONNX"), info->outDir + QStringLiteral("/model.onnx"),
                                              tr("ONNX files (*.onnx)"));
        if (target.isEmpty()) return {};
        if (QFileInfo(target).suffix().isEmpty()) target += QStringLiteral(".onnx");  // the export takes FILE.onnx only
    }
    if (ask) QApplication::setOverrideCursor(Qt::WaitCursor);
    QString text;
    QMessageBox::Icon icon = QMessageBox::Information;
    try {
        const hr::OnnxExportResult r = hr::export_onnx(info->outDir.toStdString(), target.toStdString());
        text = tr("Wrote %1 (%2, opset %3): input \"input\", output \"logits\"; the input's normalisation is in "
                  "the graph (docs/export.md)")
                   .arg(target, QString::fromStdString(hr::format_bytes(static_cast<std::size_t>(r.bytes))))
                   .arg(r.opset);
    } catch (const hr::Error& e) {
        text = messageText(e.message());
        icon = QMessageBox::Warning;
    }
    if (ask) QApplication::restoreOverrideCursor();
    return tell(icon, text);
}

ExportDialog* RunsView::openExport(qint64 runId, ExportKind kind, bool show) {
    const auto info = m_store && m_store->isOpen() ? m_store->run(runId) : std::nullopt;
    QString why;
    if (!info) why = tr("The run is not in the history");
    else if (info->outDir.isEmpty() || !QFileInfo::exists(info->outDir + QStringLiteral("/model.safetensors")))
        why = tr("The run left no model.safetensors in an output folder, so there is no model to export");
    if (!why.isEmpty()) {
        if (show) {
            auto* box = new QMessageBox(QMessageBox::Warning, tr("Export model"), why, QMessageBox::Ok, this);
            box->setAttribute(Qt::WA_DeleteOnClose);
            box->open();
        }
        return nullptr;
    }
    auto* dialog = new ExportDialog(kind, info->outDir, info->name, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    if (show) dialog->open();
    return dialog;
}

void RunsView::continueSelected() {
    const QList<qint64> ids = selectedRunIds();
    if (ids.size() == 1) continueRun(ids.first(), true);
}

bool RunsView::continueRun(qint64 runId, bool ask, qint64 totalLength) {
    auto refuse = [&](const QString& why) {
        if (ask) {
            auto* box = new QMessageBox(QMessageBox::Warning, tr("Continue training"), why, QMessageBox::Ok, this);
            box->setAttribute(Qt::WA_DeleteOnClose);
            box->open();
        }
        return false;
    };
    if (const QString why = continueBlocker(runId); !why.isEmpty()) return refuse(why);
    const auto info = m_store->run(runId);
    QString error;
    const std::optional<ContinuePoint> point = RunController::continuePoint(info->outDir, &error);
    if (!point) return refuse(error);
    const bool bySteps = point->config.steps > 0;
    const qint64 own = bySteps ? point->config.steps : point->config.epochs;
    qint64 length = totalLength > 0 ? totalLength : own;
    if (ask) {
        QDialog dialog(this);
        dialog.setObjectName(QStringLiteral("continueDialog"));
        dialog.setWindowTitle(tr("Continue training"));
        auto* form = new QFormLayout(&dialog);
        auto* note = new QLabel(tr("\"%1\" has a checkpoint at step %2 (epoch %3) in %4. Training goes on from there "
                                   "with the run's own settings to the total length below.")
                                    .arg(info->name)
                                    .arg(point->checkpointStep)
                                    .arg(point->checkpointEpoch)
                                    .arg(info->outDir),
                                &dialog);
        note->setWordWrap(true);
        form->addRow(note);
        if (point->ranks > 1) {  // Continue training relaunches it on as many ranks (RankRelay)
            auto* ranks = new QLabel(tr("It trained on %1 ranks and goes on on %1 ranks.").arg(point->ranks), &dialog);
            ranks->setObjectName(QStringLiteral("continueRanks"));
            form->addRow(ranks);
        }
        auto* spin = new QSpinBox(&dialog);
        spin->setObjectName(QStringLiteral("continueLength"));
        spin->setRange(bySteps ? int(qMin<qint64>(point->checkpointStep + 1, INT_MAX)) : qMax(1, point->checkpointEpoch),
                       INT_MAX);
        spin->setValue(int(qBound<qint64>(qint64(spin->minimum()), length, qint64(INT_MAX))));
        form->addRow(bySteps ? tr("Total steps:") : tr("Total epochs:"), spin);
        auto* box = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
        box->button(QDialogButtonBox::Ok)->setText(tr("Continue"));
        connect(box, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
        connect(box, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
        form->addRow(box);
        if (dialog.exec() != QDialog::Accepted) return false;
        length = spin->value();
    }
    if (bySteps) emit continueRequested(runId, length, 0);
    else emit continueRequested(runId, 0, int(qMin<qint64>(length, INT_MAX)));
    return true;
}

void RunsView::onSelectionChanged() {
    updateButtons();
    const QList<qint64> ids = selectedRunIds();
    if (ids != m_shown) showRuns(ids);
}

void RunsView::showRuns(const QList<qint64>& all) {
    m_shown = all;
    const QList<qint64> ids = all.mid(0, kMaxOverlay);
    for (hrw::LiveChart* c : charts()) c->removeAllSeries();
    if (all.size() > kMaxOverlay)
        m_chartNote->setText(tr("Showing the first %1 of %2 selected runs").arg(kMaxOverlay).arg(all.size()));
    else if (all.size() > 1)
        m_chartNote->setText(tr("Comparing %1 runs").arg(all.size()));
    else
        m_chartNote->clear();
    if (ids.isEmpty() || !m_store || !m_store->isOpen()) {
        for (hrw::LiveChart* c : charts()) c->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    QList<qint64> idList(ids.begin(), ids.end());
    auto fill = [&](hrw::LiveChart* chart, const QString& metric, double scale, bool markers) {
        const QVector<RunSeries> series = m_store->overlay(idList, metric);
        for (int i = 0; i < series.size(); ++i) {
            RunSeries s = series[i];
            for (double& v : s.y) v *= scale;
            dropNaN(s.x, s.y);
            thin(s.x, s.y, kMaxChartPoints);
            const int k = chart->addSeries(QStringLiteral("#%1 %2").arg(s.runId).arg(s.runName), runColor(i), false, markers);
            chart->appendPoints(k, s.x, s.y);
        }
    };
    fill(m_loss, QStringLiteral("loss"), 1.0, false);
    fill(m_accuracy, QStringLiteral("test_accuracy"), 100.0, true);
    fill(m_throughput, QStringLiteral("images_per_second"), 1.0, false);
    for (int i = 0; i < ids.size(); ++i) {
        const auto info = m_store->run(ids[i]);
        QVector<double> x, y;
        for (const MemorySampleRow& m : m_store->memorySamples(ids[i])) {
            x << double(qMax<qint64>(0, m.step));
            y << double(m.liveTotal) / (1024.0 * 1024.0);
        }
        thin(x, y, kMaxChartPoints);
        const int k = m_memory->addSeries(QStringLiteral("#%1 %2").arg(ids[i]).arg(info ? info->name : QString()), runColor(i));
        m_memory->appendPoints(k, x, y);
    }
    for (hrw::LiveChart* c : charts()) {
        c->setDark(c->isDark());
        c->resetView();
    }
}

void RunsView::onItemChanged(QTableWidgetItem* item) {
    if (m_filling || !item || item->column() != NameColumn) return;
    const qint64 id = item->data(Qt::UserRole).toLongLong();
    if (!renameRun(id, item->text())) {
        const auto info = m_store ? m_store->run(id) : std::nullopt;
        m_filling = true;
        if (info) item->setText(info->name);
        m_filling = false;
    }
}

bool RunsView::renameRun(qint64 runId, const QString& name) {
    if (!m_store) return false;
    const QString n = name.trimmed();
    if (n.isEmpty() || !m_store->renameRun(runId, n)) {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Rename run"),
                                    n.isEmpty() ? tr("A run's name cannot be empty.") : m_store->lastError(),
                                    QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return false;
    }
    reload();  // runsChanged reloads too; at once keeps the table and the charts' legends right
    if (m_shown.contains(runId)) showRuns(m_shown);
    return true;
}

void RunsView::renameSelected() {
    const QList<qint64> ids = selectedRunIds();
    if (ids.size() != 1) return;
    const int r = rowOf(ids.first());
    if (r >= 0) m_table->editItem(m_table->item(r, NameColumn));
}

int RunsView::deleteRuns(const QList<qint64>& requested, bool ask) {
    if (!m_store) return 0;
    QList<qint64> ids;
    for (qint64 id : requested)
        if (id != m_activeRun) ids << id;
    if (ids.isEmpty()) {
        if (!requested.isEmpty() && ask)
            QMessageBox::information(this, tr("Delete runs"), tr("The run in progress cannot be deleted; stop it first."));
        return 0;
    }
    if (ask) {
        QString text;
        if (ids.size() == 1) {
            const auto info = m_store->run(ids.first());
            text = tr("Delete the run \"%1\" and everything recorded for it? This cannot be undone.")
                       .arg(info ? info->name : QString::number(ids.first()));
        } else {
            text = tr("Delete %1 runs and everything recorded for them? This cannot be undone.").arg(ids.size());
        }
        QMessageBox box(QMessageBox::Warning, tr("Delete runs"), text, QMessageBox::Cancel, this);
        box.setObjectName(QStringLiteral("confirmDeleteBox"));
        QPushButton* del = box.addButton(tr("Delete"), QMessageBox::DestructiveRole);
        box.setDefaultButton(QMessageBox::Cancel);
        box.exec();
        if (box.clickedButton() != del) return 0;
    }
    int n = 0;
    for (qint64 id : ids)
        if (m_store->deleteRun(id)) ++n;
    reload();
    return n;
}

void RunsView::deleteSelected() { deleteRuns(selectedRunIds(), true); }

void RunsView::setDark(bool dark) {
    for (hrw::LiveChart* c : charts()) c->setDark(dark);
}

}  // namespace hrapp
