#pragma once
// The Runs tab: the run history (RunStore) as a filterable table (name, status, started, duration,
// device, test accuracy), with rename (inline), delete (confirmed), charts of the selected run, the
// selected runs overlaid in the same charts when two or more are selected, "Load into builder",
// "Export report…", "Export model" (a Hugging Face folder, a peft adapter, a GGUF or an ONNX file, each in an
// ExportDialog: the same export as `headroom export`) and "Continue training" (a stopped or failed run, from the newest checkpoint in its
// folder, to a total length asked for; the window starts it as `headroom train --resume` does). The
// Continued column shows the history's links between a run and the run that continues it.
#include <QList>
#include <QWidget>

#include "session/RunExport.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;
class QTableWidgetItem;

namespace hrw {
class LiveChart;
}

namespace hrapp {

class ExportDialog;
class RunStore;

class RunsView : public QWidget {
    Q_OBJECT
public:
    explicit RunsView(RunStore* store, QWidget* parent = nullptr);

    enum Column { NameColumn = 0, StatusColumn, StartedColumn, DurationColumn, DeviceColumn, AccuracyColumn,
                  ContinuedColumn, ColumnCount };
    static constexpr int kMaxOverlay = 8;

    QTableWidget* table() const { return m_table; }
    QLineEdit* filterEdit() const { return m_filter; }
    QComboBox* statusFilter() const { return m_status; }
    hrw::LiveChart* lossChart() const { return m_loss; }
    hrw::LiveChart* accuracyChart() const { return m_accuracy; }
    hrw::LiveChart* throughputChart() const { return m_throughput; }
    hrw::LiveChart* memoryChart() const { return m_memory; }
    QList<hrw::LiveChart*> charts() const;

    int rowCount() const;
    qint64 runIdAt(int row) const;
    int rowOf(qint64 runId) const;  // -1 when not listed
    QList<qint64> selectedRunIds() const;  // in table order
    void selectRuns(const QList<qint64>& ids);
    QList<qint64> shownRunIds() const { return m_shown; }

    bool renameRun(qint64 runId, const QString& name);
    // ask: confirm with a dialog first. Returns the number deleted.
    int deleteRuns(const QList<qint64>& ids, bool ask = true);
    void setActiveRun(qint64 runId);  // the window's current run: not deletable, none continued meanwhile
    void setDark(bool dark);

    QPushButton* continueButton() const { return m_continueButton; }
    // Why the run cannot be continued ("" when it can): not stopped or failed, no output folder or no
    // checkpoint in it, already continued by a later run, or the window's run in progress.
    QString continueBlocker(qint64 runId) const;
    // Continue training: asks for the new total length (steps or epochs, the run's own as default)
    // when `ask`, else uses `totalLength` (<= 0: the run's own); emits continueRequested. False when
    // the run cannot be continued (a message box says why when `ask`) or the dialog was cancelled.
    bool continueRun(qint64 runId, bool ask = true, qint64 totalLength = 0);
    // Export as ONNX: the run's model (its folder's model.safetensors) as an ONNX file (exporters/onnx): `file`,
    // or, when empty, one asked for. Returns the message shown (the file written, or why not: a language model,
    // a run without a folder); nothing is written on error. `ask` false: no dialogs (tests).
    QString exportOnnx(qint64 runId, const QString& file = QString(), bool ask = true);
    // The context menu's Export model: the run's export of `kind` in a dialog (gui/ExportDialog.h, deleted on
    // close; opened when `show`). Null, with a message box when `show`, for a run without weights in a folder.
    ExportDialog* openExport(qint64 runId, ExportKind kind, bool show = true);

public slots:
    void reload();  // re-reads the store (keeps the selection)
    void renameSelected();
    void deleteSelected();
    void continueSelected();

signals:
    void loadRequested(qint64 runId);
    void exportRequested(qint64 runId);
    // Continue the run from its checkpoint to totalSteps (> 0) or, when the run counts epochs, totalEpochs.
    void continueRequested(qint64 runId, qint64 totalSteps, int totalEpochs);
    void saveChartRequested(hrw::LiveChart* chart);
    // Fine-tune from this run: a new run from the weights the run wrote (MainWindow::fineTuneFromRun).
    void fineTuneRequested(qint64 runId);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void fitNameColumn();
    void onSelectionChanged();
    void onItemChanged(QTableWidgetItem* item);
    void showRuns(const QList<qint64>& ids);
    void updateButtons();
    QString statusText(const QString& status) const;

    RunStore* m_store;
    QLineEdit* m_filter = nullptr;
    QComboBox* m_status = nullptr;
    QTableWidget* m_table = nullptr;
    QLabel* m_empty = nullptr;
    QLabel* m_chartNote = nullptr;
    QPushButton* m_renameButton = nullptr;
    QPushButton* m_deleteButton = nullptr;
    QPushButton* m_loadButton = nullptr;
    QPushButton* m_exportButton = nullptr;
    QPushButton* m_continueButton = nullptr;
    hrw::LiveChart* m_loss = nullptr;
    hrw::LiveChart* m_accuracy = nullptr;
    hrw::LiveChart* m_throughput = nullptr;
    hrw::LiveChart* m_memory = nullptr;
    QList<qint64> m_shown;
    qint64 m_activeRun = 0;
    bool m_filling = false;
};

}  // namespace hrapp
