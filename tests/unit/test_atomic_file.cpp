// AtomicFile (base/atomic_file.h): the destination appears whole or not at all.
#include <QtTest>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/atomic_file.h"
#include "base/error.h"
#include "test_support.h"

using namespace hr;
namespace fs = std::filesystem;

namespace {
std::string slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}
int entries(const std::string& dir) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir)) (void)e, ++n;
    return n;
}
}  // namespace

class TestAtomicFile : public QObject {
    Q_OBJECT
private slots:
    void commitReplacesTheOldFile() {
        const std::string dir = hrtest::temp_dir("atomic");
        const std::string p = dir + "/a.txt";
        write_file_atomic(p, "old");
        write_file_atomic(p, "new contents");
        QCOMPARE(slurp(p), std::string("new contents"));
        QCOMPARE(entries(dir), 1);
    }

    void abandonedWriteLeavesTheOldFileAndNoTemporary() {
        const std::string dir = hrtest::temp_dir("atomic");
        const std::string p = dir + "/a.txt";
        write_file_atomic(p, "old");
        {
            AtomicFile f(p);
            f.write("half of a new ");
            QCOMPARE(entries(dir), 2);  // the temporary exists while writing, beside the old file
            // destroyed without commit(), as when an exception unwinds
        }
        QCOMPARE(slurp(p), std::string("old"));
        QCOMPARE(entries(dir), 1);
    }

    void temporaryNamesAreRecognised() {
        const std::string dir = hrtest::temp_dir("atomic");
        AtomicFile f(dir + "/run.json");
        f.write("{}");
        std::string tmpName;
        for (const auto& e : fs::directory_iterator(dir)) tmpName = e.path().filename().string();
        QVERIFY2(is_atomic_temp_name(tmpName), tmpName.c_str());
        QVERIFY(!is_atomic_temp_name("run.json"));
        QVERIFY(!is_atomic_temp_name(".hidden"));
        f.commit();
        QCOMPARE(slurp(dir + "/run.json"), std::string("{}"));
    }

    void missingFolderIsNamed() {
        const std::string p = hrtest::temp_dir("atomic") + "/no/such/folder/x.bin";
        try {
            write_file_atomic(p, "x");
            QFAIL("expected an error");
        } catch (const Error& e) {
            const std::string m = e.what();
            QVERIFY2(m.find(p) != std::string::npos, m.c_str());
            QVERIFY2(m.find("folder exists") != std::string::npos, m.c_str());
        }
        QVERIFY(!fs::exists(p));
    }

    void fullDiskIsReportedAndLeavesNothing() {
        // /dev/full answers every write with ENOSPC; a file system that is full behaves the same. We
        // cannot create a temporary in /dev, so write a real file under a size limit instead.
        const std::string dir = hrtest::temp_dir("atomic");
        const std::string p = dir + "/big.bin";
        write_file_atomic(p, "old");
        std::string big(1 << 20, 'x');
        struct rlimit_guard {
            rlimit_guard() { std::signal(SIGXFSZ, SIG_IGN); }
            ~rlimit_guard() { std::signal(SIGXFSZ, SIG_DFL); }
        } guard;
        pid_t pid = ::fork();
        if (pid == 0) {  // child: a 64 KiB file-size limit, then a 1 MiB write
            struct rlimit rl{65536, 65536};
            ::setrlimit(RLIMIT_FSIZE, &rl);
            try {
                write_file_atomic(p, big);
                ::_exit(3);
            } catch (const Error& e) {
                const std::string m = e.what();
                ::_exit(m.find("too large") != std::string::npos ? 0 : 4);
            }
        }
        int status = 0;
        ::waitpid(pid, &status, 0);
        QVERIFY(WIFEXITED(status));
        QCOMPARE(WEXITSTATUS(status), 0);
        QCOMPARE(slurp(p), std::string("old"));
        QCOMPARE(entries(dir), 1);
    }
};

QTEST_APPLESS_MAIN(TestAtomicFile)
#include "test_atomic_file.moc"
