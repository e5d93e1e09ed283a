// The checks on files fitbench reads and writes: a FIFO or a device is refused at once instead
// of blocking a read or being replaced by a write; a symbolic link is written through and kept;
// a folder that takes no file is reported before any work.
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <QTest>
#include <cerrno>
#include <filesystem>
#include <fstream>

#include "core/base/error.h"
#include "core/file_checks.h"
#include "core/io/json_file.h"

using namespace fitbench;
namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The message of the InputError fn throws, or "" when it throws none.
template <class F>
QString error_of(F&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace

class TestFileChecks : public QObject {
  Q_OBJECT
 private slots:
  void reading_refuses_fifos_devices_and_folders();
  void writing_refuses_fifos_and_devices_and_leaves_them();
  void writing_goes_through_a_symbolic_link();
  void writability_is_checked_without_writing();
  void names_too_long_are_said_so();
  void outputs_must_not_name_inputs_or_each_other();
  void checkpoint_epoch_fields_name_every_epochs_file();
};

void TestFileChecks::reading_refuses_fifos_devices_and_folders() {
  QTemporaryDir dir;
  const fs::path fifo = dir.filePath("in.json").toStdString();
  QCOMPARE(mkfifo(fifo.c_str(), 0600), 0);
  // Opening a FIFO for reading would wait for a writer forever.
  QCOMPARE(
      error_of([&] { json_io::read_json_file(fifo); }),
      QString::fromStdString(fifo.string()) + ": is not a regular file (a FIFO, socket or device)");
  QVERIFY(error_of([] {
            json_io::read_json_file("/dev/zero");
          }).endsWith("/dev/zero: is not a regular file (a FIFO, socket or device)"));
  QVERIFY(error_of([&] {
            json_io::read_json_file(dir.path().toStdString());
          }).endsWith(": is a directory"));
  // A regular file and a missing one pass the check (the open reports the missing one).
  const fs::path ok = dir.filePath("ok.json").toStdString();
  std::ofstream(ok) << "{}";
  QVERIFY(error_of([&] { check_regular_file(ok, "ok.json"); }).isEmpty());
  QVERIFY(error_of([&] { check_regular_file(dir.filePath("none").toStdString(), "x"); }).isEmpty());
}

void TestFileChecks::writing_refuses_fifos_and_devices_and_leaves_them() {
  QTemporaryDir dir;
  const fs::path fifo = dir.filePath("out.json").toStdString();
  QCOMPARE(mkfifo(fifo.c_str(), 0600), 0);
  QVERIFY(error_of([&] {
            json_io::write_file_atomically(fifo, "{}\n");
          }).endsWith("out.json: is not a regular file (a FIFO, socket or device)"));
  QVERIFY(fs::is_fifo(fifo));  // not replaced by a regular file
  QVERIFY(error_of([] {
            json_io::write_file_atomically("/dev/null", "{}\n");
          }).endsWith("is not a regular file (a FIFO, socket or device)"));
  QVERIFY(fs::is_character_file("/dev/null"));
  QVERIFY(error_of([&] {
            json_io::write_file_atomically(dir.path().toStdString(), "{}\n");
          }).endsWith(": is a directory"));
}

void TestFileChecks::writing_goes_through_a_symbolic_link() {
  QTemporaryDir dir;
  const fs::path real = dir.filePath("real").toStdString();
  fs::create_directory(real);
  const fs::path target = real / "model.json";
  std::ofstream(target) << "old\n";
  const fs::path link = dir.filePath("link.json").toStdString();
  fs::create_symlink("real/model.json", link);  // relative, as `ln -s` makes it
  json_io::write_file_atomically(link, "new\n");
  QVERIFY(fs::is_symlink(link));
  QCOMPARE(read_all(target), std::string("new\n"));
  QCOMPARE(read_all(link), std::string("new\n"));
  // A link to a file that does not exist yet creates that file.
  const fs::path dangling = dir.filePath("next.json").toStdString();
  fs::create_symlink(real / "next.json", dangling);
  json_io::write_file_atomically(dangling, "x\n");
  QVERIFY(fs::is_symlink(dangling));
  QCOMPARE(read_all(real / "next.json"), std::string("x\n"));
}

// A name over 255 bytes is "too long", not "not a regular file", read or written.
void TestFileChecks::names_too_long_are_said_so() {
  QTemporaryDir dir;
  const fs::path file = dir.filePath(QString(300, 'a') + ".json").toStdString();
  const QString expected = QString::fromStdString(file.string()) +
                           ": is a name too long for the file system (each name in a path may "
                           "hold 255 bytes, the whole path 4095)";
  QCOMPARE(error_of([&] { check_writable_file(file); }), expected);
  QCOMPARE(error_of([&] { json_io::read_json_file(file); }), expected);
}

void TestFileChecks::writability_is_checked_without_writing() {
  QTemporaryDir dir;
  const fs::path fresh = dir.filePath("history.json").toStdString();
  // Not even for a moment does the folder show a probe (which a kill could leave behind).
  const int watch = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  QVERIFY(watch >= 0);
  QVERIFY(::inotify_add_watch(watch, dir.path().toLocal8Bit().constData(), IN_CREATE) >= 0);
  QVERIFY(error_of([&] { check_writable_file(fresh); }).isEmpty());
  char events[4096];
  const ssize_t created = ::read(watch, events, sizeof events);
  const int read_error = errno;
  ::close(watch);
  QCOMPARE(created, ssize_t{-1});
  QCOMPARE(read_error, EAGAIN);
  QVERIFY(!fs::exists(fresh));
  QCOMPARE(std::distance(fs::directory_iterator(dir.path().toStdString()), {}),
           0);  // no probe left
  QCOMPARE(error_of([] { check_writable_file("/proc/fitbench.json"); }),
           QString("/proc/fitbench.json: cannot be written: No such file or directory"));
  const std::string missing = dir.filePath("no/such/folder/m.json").toStdString();
  QCOMPARE(error_of([&] { check_writable_file(missing); }),
           QString::fromStdString(missing) + ": cannot be written: No such file or directory");
  QVERIFY(error_of([] {
            check_writable_file("/dev/full");
          }).endsWith("is not a regular file (a FIFO, socket or device)"));
}

void TestFileChecks::outputs_must_not_name_inputs_or_each_other() {
  QTemporaryDir dir;
  const fs::path exp = fs::path(dir.path().toStdString()) / "exp.json";
  std::ofstream(exp) << "{}";
  const std::vector<RunFile> inputs = {{exp.string(), {}, "the experiment file"},
                                       {"data/points.csv", {}, "the data file"}};
  const auto check = [&](const std::vector<RunFile>& outputs) {
    return error_of([&] { check_outputs_apart(inputs, outputs); });
  };
  QCOMPARE(check({{(fs::path(dir.path().toStdString()) / "out.json").string(), "--history",
                   "--history's file too"}}),
           QString());
  // However the path is spelled: "..", a relative path against an absolute one, a link.
  const std::string dotted = (exp.parent_path() / "sub" / ".." / "exp.json").string();
  QCOMPARE(check({{dotted, "--history", "--history's file too"}}),
           QString::fromStdString("--history: " + dotted +
                                  " is the experiment file; write to another file"));
  QCOMPARE(check({{(fs::current_path() / "data/points.csv").string(), "--trace", "t"}}).left(9),
           QString("--trace: "));
  const fs::path link = fs::path(dir.path().toStdString()) / "link.json";
  fs::create_symlink(exp, link);
  QVERIFY(check({{link.string(), "--save-model", "m"}}).contains("is the experiment file"));
  // An output against an earlier output.
  QCOMPARE(check({{"a.csv", "fit.callbacks[0].config.filename", "CSVLogger's file too"},
                  {"./a.csv", "--history", "--history's file too"}}),
           QString("--history: ./a.csv is CSVLogger's file too; write to another file"));
  // Only ModelCheckpoint's path has fields; elsewhere "{epoch}" is a file name as any other.
  QCOMPARE(check({{"c{epoch}.csv", "fit.callbacks[0].config.filename", "CSVLogger's file too"},
                  {"c1.csv", "--history", "--history's file too"}}),
           QString());
}

void TestFileChecks::checkpoint_epoch_fields_name_every_epochs_file() {
  // ModelCheckpoint's fields, read as its str.format template.
  const std::string dir = fs::current_path().string();
  const std::vector<RunFile> inputs = {{dir + "/run7.json", {}, "the experiment file"},
                                       {dir + "/w-2024-03.json", {}, "the model file"}};
  const auto check = [&](const std::string& pattern, const std::string& later = {}) {
    std::vector<RunFile> outputs = {
        {pattern, "fit.callbacks[0].config.filepath", "ModelCheckpoint's file too", true}};
    if (!later.empty()) outputs.push_back({later, "--save-model", "--save-model's file too"});
    return error_of([&] { check_outputs_apart(inputs, outputs); });
  };
  QCOMPARE(check("run{epoch}.json"),
           QString::fromStdString("fit.callbacks[0].config.filepath: run{epoch}.json can make " +
                                  dir + "/run7.json, the experiment file; write to another file"));
  QVERIFY(!check("run{epoch:02d}.json").isEmpty());
  QCOMPARE(check("run-{epoch}.json"), QString());
  QCOMPARE(check("run{epoch}x.json"), QString());
  // Digits in the literal parts do not mislead the match.
  QVERIFY(check("w-2024-{epoch:02d}.json").contains("can make"));
  QCOMPARE(check("w-2025-{epoch:02d}.json"), QString());
  QVERIFY(!check("w-{epoch}-{epoch}.json").isEmpty());
  // A later output against the pattern, and two patterns.
  QCOMPARE(check("ck-{epoch:02d}.json", "ck-03.json"),
           QString("--save-model: ck-03.json is ModelCheckpoint's file too; write to another "
                   "file"));
  QCOMPARE(check("ck-{epoch:02d}.json", "ck-x.json"), QString());
  const auto two = [](const std::string& a, const std::string& b) {
    return error_of([&] {
      check_outputs_apart(
          {}, {{a, "fit.callbacks[0].config.filepath", "ModelCheckpoint's file too", true},
               {b, "fit.callbacks[1].config.filepath", "ModelCheckpoint's file too", true}});
    });
  };
  QCOMPARE(two("a{epoch}.json", "a{epoch:03d}.json"),
           QString("fit.callbacks[1].config.filepath: a{epoch:03d}.json can make the files of "
                   "a{epoch}.json, ModelCheckpoint's file too; write to another file"));
  QCOMPARE(two("a{epoch}.json", "b{epoch}.json"), QString());
  // A logged value's field ({val_loss:.2f}) can be any text within the folder; "{{" is a brace.
  QVERIFY(check("run{val_loss:.2f}.json").contains("can make"));
  QVERIFY(check("w-{epoch}-{loss}.json").contains("can make"));
  QCOMPARE(check("run{val_loss:.2f}/x.json"), QString());
  QCOMPARE(check("run{{epoch}}.json"), QString());
  QCOMPARE(check("ck-{epoch}-{val_loss:.2f}.json", "ck-3-0.42.json"),
           QString("--save-model: ck-3-0.42.json is ModelCheckpoint's file too; write to another "
                   "file"));
  QCOMPARE(two("a{epoch}-{loss}.json", "a{epoch}.json"), QString());
}

QTEST_GUILESS_MAIN(TestFileChecks)
#include "tst_file_checks.moc"
