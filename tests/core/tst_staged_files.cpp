// StagedFiles: a file being written has no name in its folder until it is committed (so a kill
// leaves nothing behind), a set of files replaces the old set together, a failed write leaves the
// old files as they were, a symbolic link is written through, and the new file gets the mode
// any file the process makes gets; a temporary a killed writer left is removed by the next.
#include <sys/stat.h>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "core/base/error.h"
#include "core/io/json_file.h"
#include "core/staged_files.h"

using namespace fitbench;

namespace {

QByteArray contents(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("(missing)");
}

void put(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  f.write(bytes);
}

QStringList entries(const QString& dir) {
  return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                             QDir::Name);
}

}  // namespace

class TestStagedFiles : public QObject {
  Q_OBJECT

 private slots:
  // While a file is staged the folder holds only what it held: a kill -9 at that moment (the
  // whole time the bytes are written) leaves no temporary behind.
  void stagedFileHasNoNameUntilCommitted() {
    QTemporaryDir dir;
    put(dir.filePath("model.json"), "old\n");
    StagedFiles files;
    files.stage(dir.filePath("model.json").toStdString(), std::string(1 << 20, 'x'));
    QCOMPARE(entries(dir.path()), QStringList{"model.json"});
    QCOMPARE(contents(dir.filePath("model.json")), QByteArray("old\n"));
    files.commit();
    QCOMPARE(entries(dir.path()), QStringList{"model.json"});
    QCOMPARE(contents(dir.filePath("model.json")).size(), 1 << 20);
  }

  void writeFileAtomicallyLeavesOnlyTheFile() {
    QTemporaryDir dir;
    json_io::write_file_atomically(dir.filePath("a.json").toStdString(), "{}\n");
    json_io::write_file_atomically(dir.filePath("a.json").toStdString(), "{\"b\": 1}\n");
    QCOMPARE(entries(dir.path()), QStringList{"a.json"});
    QCOMPARE(contents(dir.filePath("a.json")), QByteArray("{\"b\": 1}\n"));
  }

  void aSetIsReplacedTogether() {
    QTemporaryDir dir;
    put(dir.filePath("history.json"), "old history\n");
    put(dir.filePath("model.json"), "old model\n");
    StagedFiles files;
    json_io::write_file_atomically(dir.filePath("history.json").toStdString(), "new history\n",
                                   &files);
    json_io::write_file_atomically(dir.filePath("model.json").toStdString(), "new model\n", &files);
    QCOMPARE(files.size(), size_t{2});
    QCOMPARE(contents(dir.filePath("history.json")), QByteArray("old history\n"));
    files.commit();
    QCOMPARE(contents(dir.filePath("history.json")), QByteArray("new history\n"));
    QCOMPARE(contents(dir.filePath("model.json")), QByteArray("new model\n"));
    QCOMPARE(entries(dir.path()), (QStringList{"history.json", "model.json"}));
  }

  // The second file of a set cannot be written (its name is a folder): nothing is replaced, and
  // the first file's staged bytes vanish with the set.
  void aFailedWriteKeepsTheOldSet() {
    QTemporaryDir dir;
    put(dir.filePath("history.json"), "old history\n");
    QVERIFY(QDir(dir.path()).mkdir("model.json"));
    {
      StagedFiles files;
      files.stage(dir.filePath("history.json").toStdString(), "new history\n");
      try {
        files.stage(dir.filePath("model.json").toStdString(), "new model\n");
        QFAIL("a folder was taken for a file");
      } catch (const InputError& e) {
        QVERIFY2(std::string(e.what()).find("model.json") != std::string::npos, e.what());
      }
    }
    QCOMPARE(contents(dir.filePath("history.json")), QByteArray("old history\n"));
    QCOMPARE(entries(dir.path()), (QStringList{"history.json", "model.json"}));
  }

  void aLinkIsWrittenThrough() {
    QTemporaryDir dir;
    put(dir.filePath("real.json"), "old\n");
    QVERIFY(QFile::link(dir.filePath("real.json"), dir.filePath("link.json")));
    StagedFiles files;
    files.stage(dir.filePath("link.json").toStdString(), "new\n");
    files.commit();
    QVERIFY(QFileInfo(dir.filePath("link.json")).isSymLink());
    QCOMPARE(contents(dir.filePath("real.json")), QByteArray("new\n"));
  }

  // The mode a new file gets from open(2): 0666 less the umask.
  void modeFollowsTheUmask() {
    QTemporaryDir dir;
    const mode_t old = ::umask(022);
    json_io::write_file_atomically(dir.filePath("a.json").toStdString(), "{}\n");
    ::umask(077);
    json_io::write_file_atomically(dir.filePath("b.json").toStdString(), "{}\n");
    ::umask(old);
    struct stat a, b;
    QCOMPARE(::stat(dir.filePath("a.json").toUtf8().constData(), &a), 0);
    QCOMPARE(::stat(dir.filePath("b.json").toUtf8().constData(), &b), 0);
    QCOMPARE(a.st_mode & 0777, mode_t{0644});
    QCOMPARE(b.st_mode & 0777, mode_t{0600});
  }

  // A kill between naming a committed file and renaming it over its target leaves
  // `.<name>.tmp-<16 hex digits>`; the next write of the same file removes it, and only it.
  void aKilledWritersTemporaryIsRemovedByTheNext() {
    QTemporaryDir dir;
    const QStringList others{".ck.json.tmp-0123456789abcdeg", ".ck.json.tmp-keep",
                             ".other.json.tmp-0123456789abcdef", "ck.json.tmp-0123456789abcdef"};
    for (const QString& name : others) put(dir.filePath(name), "not ours\n");
    put(dir.filePath(".ck.json.tmp-0123456789abcdef"), "stale\n");
    put(dir.filePath(".ck.json.tmp-fedcba9876543210"), "stale\n");
    json_io::write_file_atomically(dir.filePath("ck.json").toStdString(), "{}\n");
    QStringList expected = others;
    expected << "ck.json";
    expected.sort();
    QStringList found = entries(dir.path());
    found.sort();
    QCOMPARE(found, expected);
  }

  void aMissingFolderIsSaid() {
    QTemporaryDir dir;
    try {
      json_io::write_file_atomically(dir.filePath("no/such/a.json").toStdString(), "{}\n");
      QFAIL("written into a missing folder");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("a.json: cannot be written: No such file or directory") !=
                   std::string::npos,
               e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestStagedFiles)
#include "tst_staged_files.moc"
