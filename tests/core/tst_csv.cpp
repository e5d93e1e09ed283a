// Tests of the CSV readers (read_csv_dataset, read_csv_table, load_dataset with a CSV file):
// accepted syntax and every error with its exact place.
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <functional>
#include <optional>

#include "core/base/error.h"
#include "core/data/csv_reader.h"
#include "core/data/dataset.h"
#include "core/run/experiment_runner.h"
#include "tests/core/input_error.h"

using namespace fitbench;

namespace {

using test::error_of;

DataSpec csv_spec(const std::string& file, std::vector<std::string> target,
                  std::vector<std::string> features = {}, char delimiter = ',') {
  DataSpec s;
  s.generator.clear();
  s.csv = file;
  s.target = std::move(target);
  s.features_columns = std::move(features);
  s.delimiter = delimiter;
  return s;
}

Matrix matrix(Index rows, Index cols, std::initializer_list<float> values) {
  Matrix m(rows, cols);
  std::copy(values.begin(), values.end(), m.data());
  return m;
}

}  // namespace

class TestCsv : public QObject {
  Q_OBJECT

 private slots:
  void init();
  void good_files_data();
  void good_files();
  void one_hot_targets();
  void blank_lines_are_counted();
  void feature_subset_in_given_order();
  void sparse_labels_name_their_cell();
  void messages_print_as_one_line();
  void absolute_path_and_load_dataset();
  void table();
  void unnamed_columns();
  void large_file();
  void errors_data();
  void errors();
  void header_description_hints_the_delimiter();
  void missing_file();
  void table_error_names_the_path();

 private:
  // Writes `bytes` to `name` in the temporary directory.
  void write(const QString& name, const QByteArray& bytes);
  std::filesystem::path dir() const { return dir_->path().toStdString(); }

  std::unique_ptr<QTemporaryDir> dir_;
};

void TestCsv::init() {
  dir_ = std::make_unique<QTemporaryDir>();
  QVERIFY(dir_->isValid());
}

void TestCsv::write(const QString& name, const QByteArray& bytes) {
  QFile f(dir_->filePath(name));
  QVERIFY(f.open(QIODevice::WriteOnly));
  QCOMPARE(f.write(bytes), bytes.size());
}

void TestCsv::good_files_data() {
  QTest::addColumn<QByteArray>("content");
  QTest::addColumn<char>("delimiter");
  // Every row reads as features a, b = (1, 2), (3, -4.5) and target y = (0, 1).
  QTest::newRow("plain") << QByteArray("a,b,y\n1,2,0\n3,-4.5,1\n") << ',';
  QTest::newRow("no final newline") << QByteArray("a,b,y\n1,2,0\n3,-4.5,1") << ',';
  QTest::newRow("crlf") << QByteArray("a,b,y\r\n1,2,0\r\n3,-4.5,1\r\n") << ',';
  QTest::newRow("cr alone") << QByteArray("a,b,y\r1,2,0\r3,-4.5,1\r") << ',';
  QTest::newRow("bom") << QByteArray(
                              "\xEF\xBB\xBF"
                              "a,b,y\n1,2,0\n3,-4.5,1\n")
                       << ',';
  QTest::newRow("bom crlf") << QByteArray(
                                   "\xEF\xBB\xBF"
                                   "a,b,y\r\n1,2,0\r\n3,-4.5,1\r\n")
                            << ',';
  QTest::newRow("quoted") << QByteArray("\"a\",\"b\",\"y\"\n\"1\",2,\"0\"\n3,\"-4.5\",1\n") << ',';
  QTest::newRow("blank lines") << QByteArray("\na,b,y\n1,2,0\n\n3,-4.5,1\n\n  \n\r\n") << ',';
  QTest::newRow("spaces") << QByteArray("a, b, y\n 1 , 2,0\n3 ,-4.5 , 1\n") << ',';
  QTest::newRow("number forms") << QByteArray("a,b,y\n1.0,+2,0e0\n0.3e1,-45e-1,1.\n") << ',';
  QTest::newRow("semicolon") << QByteArray("a;b;y\n1;2;0\n3;-4.5;1\n") << ';';
  QTest::newRow("tab") << QByteArray("a\tb\ty\n1\t2\t0\n3\t-4.5\t1\n") << '\t';
}

void TestCsv::good_files() {
  QFETCH(QByteArray, content);
  QFETCH(char, delimiter);
  write("f.csv", content);
  const Dataset d = read_csv_dataset(csv_spec("f.csv", {"y"}, {}, delimiter), dir());
  QCOMPARE(d.feature_names, (std::vector<std::string>{"a", "b"}));
  QCOMPARE(d.target_names, std::vector<std::string>{"y"});
  QVERIFY(d.x == matrix(2, 2, {1, 2, 3, -4.5}));
  QVERIFY(d.y == matrix(2, 1, {0, 1}));
}

// Blank lines are passed over as pandas passes over them, and said: a file of a million blank
// lines and one row does not train on that row in silence.
void TestCsv::blank_lines_are_counted() {
  write("f.csv", "\na,b,y\n1,2,0\n\n3,-4.5,1\n\n  \n\r\n");
  Dataset d = read_csv_dataset(csv_spec("f.csv", {"y"}), dir());
  QCOMPARE(d.notes, std::vector<std::string>{
                        "f.csv: skipped 5 blank lines (nothing but spaces or tabs); 2 data rows "
                        "read"});
  write("f.csv", "a,b,y\n1,2,0\n" + QByteArray(100000, '\n'));
  d = read_csv_dataset(csv_spec("f.csv", {"y"}), dir());
  QCOMPARE(d.notes, std::vector<std::string>{
                        "f.csv: skipped 100000 blank lines (nothing but spaces or tabs); 1 data "
                        "row read"});
  write("f.csv", "a,b,y\n1,2,0\n3,-4.5,1\n");
  QVERIFY(read_csv_dataset(csv_spec("f.csv", {"y"}), dir()).notes.empty());
}

void TestCsv::one_hot_targets() {
  // Quoted header names with a delimiter and an escaped quote inside, a quoted field spanning two
  // lines in a column that is not used as a feature, targets in a different order than the file.
  write("f.csv",
        "id,\"size, cm\",c0,c1,\"say \"\"hi\"\"\",c2,note\n"
        "7,1.5,1,0,2,0,plain\n"
        "8,2.5,0,0,3,1,\"two\nlines\"\n"
        "9,3.5,0,1,4,0,\"a \"\"quoted\"\" word\"\n");
  DataSpec s = csv_spec("f.csv", {"c0", "c1", "c2"}, {"size, cm", "say \"hi\"", "id"});
  const Dataset d = read_csv_dataset(s, dir());
  QCOMPARE(d.target_names, (std::vector<std::string>{"c0", "c1", "c2"}));
  QCOMPARE(d.feature_names, (std::vector<std::string>{"size, cm", "say \"hi\"", "id"}));
  QVERIFY(d.y == matrix(3, 3, {1, 0, 0, 0, 0, 1, 0, 1, 0}));
  QVERIFY(d.x == matrix(3, 3, {1.5, 2, 7, 2.5, 3, 8, 3.5, 4, 9}));
}

void TestCsv::feature_subset_in_given_order() {
  write("f.csv", "name,a,b,c,y\nfirst,1,2,3,0\nsecond,4,5,6,1\n");
  const Dataset d = read_csv_dataset(csv_spec("f.csv", {"y"}, {"c", "a"}), dir());
  QCOMPARE(d.feature_names, (std::vector<std::string>{"c", "a"}));
  QVERIFY(d.x == matrix(2, 2, {3, 1, 6, 4}));
  QVERIFY(d.y == matrix(2, 1, {0, 1}));
}

// A sparse label that is no class of the output is reported at its cell before training (a
// quoted field spanning two lines keeps the line numbers right); a generator's data by its row.
void TestCsv::sparse_labels_name_their_cell() {
  write("lab.csv", "a,note,y\n1,ok,0\n2,\"two\nlines\",2\n3,ok,5\n");
  const Dataset d = read_csv_dataset(csv_spec("lab.csv", {"y"}, {"a"}), dir());
  QVERIFY(d.label_place);
  QCOMPARE(d.label_place(2), std::string("lab.csv:5:3 (y)"));    // the file as the spec names it
  check_sparse_labels(d, 6, "sparse_categorical_crossentropy");  // 0, 2, 5 < 6
  check_sparse_labels(d, 3, "categorical_crossentropy");         // other losses: not labels
  try {
    check_sparse_labels(d, 3, "sparse_categorical_crossentropy");
    QFAIL("label 5 with 3 units was accepted");
  } catch (const InputError& e) {
    QCOMPARE(e.place(), std::string("lab.csv:5:3 (y)"));
    QCOMPARE(e.message(), std::string("is the sparse label 5, but the last layer has 3 units: "
                                      "sparse_categorical_crossentropy takes class indices from "
                                      "0 to 2"));
  }
  Dataset generated;
  generated.y = matrix(2, 1, {0, -1});
  try {
    check_sparse_labels(generated, 2, "sparse_categorical_crossentropy");
    QFAIL("label -1 was accepted");
  } catch (const InputError& e) {
    QCOMPARE(e.place(), std::string("data row 1"));
  }
  // A fraction is no class index, even within range (Keras's loss would truncate it while its
  // accuracy counted it as no class).
  generated.y = matrix(2, 1, {0, 1.5f});
  try {
    check_sparse_labels(generated, 3, "sparse_categorical_crossentropy");
    QFAIL("label 1.5 was accepted");
  } catch (const InputError& e) {
    QCOMPARE(e.message(), std::string("is the sparse label 1.5, not a whole number: "
                                      "sparse_categorical_crossentropy takes class indices"));
  }
}

void TestCsv::messages_print_as_one_line() {
  // A file's bytes in a message: control characters escaped, a long text cut at a character.
  QCOMPARE(printable_message("a\tb\nc\x1b[31md\x7f"), std::string("a\\tb\\nc\\x1b[31md\\x7f"));
  QCOMPARE(printable_message("\xc3\xa9\xc3\xa9\xc3\xa9", 3),
           std::string("\xc3\xa9\xc3\xa9... (2 more bytes)"));
  QCOMPARE(printable_message(std::string(5000, 'x')).size(), size_t(2000 + 21));
  // Bytes that are not UTF-8 text (a Latin-1 file, a cut sequence, overlong forms, surrogates)
  // and the C1 controls are escaped too; well-formed text of every length is kept.
  QCOMPARE(printable_message("caf\xe9 \xc3(\xe2\x82"), std::string("caf\\xe9 \\xc3(\\xe2\\x82"));
  QCOMPARE(printable_message("\xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80"),
           std::string("\\xc0\\xaf \\xed\\xa0\\x80 \\xf4\\x90\\x80\\x80"));
  QCOMPARE(printable_message("\xe0\x80\x80 \xf0\x80\x80\x80 \xf5\x80 \xff"),
           std::string("\\xe0\\x80\\x80 \\xf0\\x80\\x80\\x80 \\xf5\\x80 \\xff"));
  QCOMPARE(printable_message("\xe0\xa0\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"),
           std::string("\xe0\xa0\x80\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"));
  QCOMPARE(printable_message("ab\xe9\xe9\xe9", 3), std::string("ab\\xe9... (2 more bytes)"));
  QCOMPARE(printable_message("\xc2\x9b[2J"), std::string("\\xc2\\x9b[2J"));
  QCOMPARE(printable_message("\xc2\xa0\xe2\x82\xac\xf0\x9f\x99\x82"),
           std::string("\xc2\xa0\xe2\x82\xac\xf0\x9f\x99\x82"));
  // A right-to-left override shows "\u202evsc.atad" as "data.csv", and an isolate reorders
  // too; both are escaped. The marks U+200F and U+200E stay, as do U+2029 and U+206A beside the
  // escaped ranges.
  QCOMPARE(printable_message("\xe2\x80\xae"
                             "vsc.atad \xe2\x81\xa6"
                             "c\xe2\x81\xa9 \xe2\x80\xaa\xe2\x80\xad"),
           std::string("\\u202evsc.atad \\u2066c\\u2069 \\u202a\\u202d"));
  QCOMPARE(printable_message("\xe2\x80\x8f\xe2\x80\x8e\xe2\x80\xa9\xe2\x81\xaa"),
           std::string("\xe2\x80\x8f\xe2\x80\x8e\xe2\x80\xa9\xe2\x81\xaa"));
}

void TestCsv::absolute_path_and_load_dataset() {
  write("f.csv", "a,y\n1,0\n2,1\n");
  // A relative path is resolved against base_dir; an absolute one is used as it is.
  const std::string absolute = (dir() / "f.csv").string();
  const Dataset a = read_csv_dataset(csv_spec(absolute, {"y"}), "/nonexistent");
  const Dataset b = load_dataset(csv_spec("f.csv", {"y"}), dir());
  QVERIFY(a.x == matrix(2, 1, {1, 2}));
  QVERIFY(b.x == a.x);
  QVERIFY(b.y == matrix(2, 1, {0, 1}));
  // Without a CSV file load_dataset generates.
  DataSpec g;
  g.generator = "xor";
  g.samples = 9;
  QCOMPARE(load_dataset(g, dir()).size(), Index(9));
}

void TestCsv::table() {
  write("t.csv", "\xEF\xBB\xBFp;\"q r\";s\r\n1;2;3\r\n4;5;6e-1\r\n\r\n");
  const CsvTable t = read_csv_table(dir() / "t.csv", ';');
  QCOMPARE(t.header, (std::vector<std::string>{"p", "q r", "s"}));
  QVERIFY(t.values == matrix(2, 3, {1, 2, 3, 4, 5, 0.6f}));
}

void TestCsv::unnamed_columns() {
  // An empty header cell is named as pandas.read_csv names it, by its 0-based index.
  write("u.csv", "a,,y, \n1,2,0,5\n3,4,1,6\n");
  const Dataset d = read_csv_dataset(csv_spec("u.csv", {"y"}), dir());
  QCOMPARE(d.feature_names, (std::vector<std::string>{"a", "Unnamed: 1", "Unnamed: 3"}));
  QVERIFY(d.x == matrix(2, 3, {1, 2, 5, 3, 4, 6}));
  const Dataset named = read_csv_dataset(csv_spec("u.csv", {"y"}, {"Unnamed: 1"}), dir());
  QVERIFY(named.x == matrix(2, 1, {2, 4}));
  write("v.csv", "a,,y\n1,x,0\n");
  try {
    read_csv_dataset(csv_spec("v.csv", {"y"}), dir());
    QFAIL("expected an error");
  } catch (const InputError& e) {
    QCOMPARE(std::string(e.place()), std::string("v.csv:2:2 (Unnamed: 1)"));
  }
}

void TestCsv::large_file() {
  // 100k rows: every value arrives in its place (the time is reported, not asserted).
  QByteArray content = "a,b,c,d,y\n";
  for (int i = 0; i < 100000; ++i) {
    content += QByteArray::number(i) + "," + QByteArray::number(i * 0.5) + ",-" +
               QByteArray::number(i % 97) + ",1e-3," + QByteArray::number(i % 2) + "\n";
  }
  write("big.csv", content);
  QElapsedTimer timer;
  timer.start();
  const Dataset d = read_csv_dataset(csv_spec("big.csv", {"y"}), dir());
  qInfo("read 100000 rows in %lld ms", static_cast<long long>(timer.elapsed()));
  QCOMPARE(d.size(), Index(100000));
  QCOMPARE(d.x(99999, 0), 99999.0f);
  QCOMPARE(d.x(12345, 1), 6172.5f);
  QCOMPARE(d.x(12345, 2), -float(12345 % 97));
  QCOMPARE(d.x(500, 3), 1e-3f);
  QCOMPARE(d.y.sum(), 50000.0f);
}

void TestCsv::errors_data() {
  QTest::addColumn<QByteArray>("content");
  QTest::addColumn<QStringList>("target");
  QTest::addColumn<QStringList>("features");
  QTest::addColumn<QString>("place");
  QTest::addColumn<QString>("message");
  const QStringList y{"y"};
  const QStringList all;
  QTest::newRow("not a number") << QByteArray("a,b,y\n1,2,0\n3,abc,1\n") << y << all
                                << "f.csv:3:2 (b)"
                                << "is not a number: \"abc\"";
  QTest::newRow("utf-16") << QByteArray(
                                 "\xFF\xFE"
                                 "a\0,\0y\0\n\0",
                                 10)
                          << y << all << "f.csv"
                          << "is UTF-16 text (as some spreadsheets save \"Unicode text\"); save "
                             "it as a UTF-8 or plain CSV file";
  QTest::newRow("header with a line break")
      << QByteArray("\"a\nb\",y\n1,0\nq,1\n") << y << all << "f.csv:4:1 (a\\nb)"
      << "is not a number: \"q\"";
  QTest::newRow("cr alone counts lines")
      << QByteArray("a,b,y\r1,2,0\r2,x,1\r") << y << all << "f.csv:3:2 (b)"
      << "is not a number: \"x\"";
  QTest::newRow("line numbers count bom, crlf and blank lines")
      << QByteArray(
             "\xEF\xBB\xBF"
             "a,b,y\r\n\r\n1,2,0\r\n\r\n3,4,1x\r\n")
      << y << all << "f.csv:5:3 (y)"
      << "is not a number: \"1x\"; string class labels are not supported, convert class labels "
         "to numbers";
  QTest::newRow("string class label")
      << QByteArray("a,species\n1,setosa\n") << QStringList{"species"} << all
      << "f.csv:2:2 (species)"
      << "is not a number: \"setosa\"; string class labels are not supported, convert class "
         "labels to numbers";
  QTest::newRow("line after a two-line quoted cell")
      << QByteArray("note,a,y\n\"line1\nline2\",1,0\nn,zz,1\n") << y << QStringList{"a"}
      << "f.csv:4:2 (a)"
      << "is not a number: \"zz\"";
  QTest::newRow("short row") << QByteArray("a,b,c,d,e\n1,2,3,4,5\n1,2,3\n") << QStringList{"e"}
                             << all << "f.csv:3"
                             << "row has 3 fields, the header has 5";
  QTest::newRow("long row") << QByteArray("a,y\n1,0,\n") << y << all << "f.csv:2"
                            << "row has 3 fields, the header has 2";
  QTest::newRow("one field") << QByteArray("a,y\n1,0\n5\n") << y << all << "f.csv:3"
                             << "row has 1 field, the header has 2";
  QTest::newRow("unnamed column") << QByteArray("a,y,\n1,0,\n") << y << all
                                  << "f.csv:2:3 (Unnamed: 2)"
                                  << "is empty: every cell that is used must hold a number";
  QTest::newRow("empty cell") << QByteArray("a,y\n,1\n") << y << all << "f.csv:2:1 (a)"
                              << "is empty: every cell that is used must hold a number";
  QTest::newRow("nan") << QByteArray("a,y\nnan,1\n") << y << all << "f.csv:2:1 (a)"
                       << "is not a finite number: \"nan\"; missing and infinite values are not "
                          "supported";
  QTest::newRow("inf") << QByteArray("a,y\n1,-inf\n") << y << all << "f.csv:2:2 (y)"
                       << "is not a finite number: \"-inf\"; missing and infinite values are not "
                          "supported";
  QTest::newRow("beyond double") << QByteArray("a,y\n1e400,1\n") << y << all << "f.csv:2:1 (a)"
                                 << "is outside the range of a 32-bit float: \"1e400\"";
  QTest::newRow("beyond float") << QByteArray("a,y\n1e39,1\n") << y << all << "f.csv:2:1 (a)"
                                << "is outside the range of a 32-bit float: \"1e39\"";
  QTest::newRow("hex") << QByteArray("a,y\n0x10,1\n") << y << all << "f.csv:2:1 (a)"
                       << "is not a number: \"0x10\"";
  QTest::newRow("long cell is shortened")
      << QByteArray("a,y\n" + QByteArray(60, 'z') + ",1\n") << y << all << "f.csv:2:1 (a)"
      << "is not a number: \"" + QString(40, 'z') + "...\"";
  QTest::newRow("missing target") << QByteArray("a,b,y\n1,2,3\n") << QStringList{"z"} << all
                                  << "data.target"
                                  << "column \"z\" is not in f.csv; its header has: a, b, y";
  QTest::newRow("missing feature")
      << QByteArray("a,b,y\n1,2,3\n") << y << QStringList{"a", "c"} << "data.features"
      << "column \"c\" is not in f.csv; its header has: a, b, y";
  QTest::newRow("semicolon file read with commas")
      << QByteArray("a;b;y\n1;2;3\n") << y << all << "data.target"
      << "column \"y\" is not in f.csv; its header is one column, \"a;b;y\", which looks "
         "\";\"-separated: set the delimiter to \";\"";
  QTest::newRow("tab file read with commas")
      << QByteArray("a\tb\ty\n1\t2\t3\n") << y << all << "data.target"
      << "column \"y\" is not in f.csv; its header is one column, \"a\\tb\\ty\", which looks "
         "\"\\t\" (a tab)-separated: set the delimiter to \"\\t\" (a tab)";
  QTest::newRow("one named column is no delimiter hint")
      << QByteArray("a\n1\n") << y << all << "data.target"
      << "column \"y\" is not in f.csv; its header has: a";
  QTest::newRow("feature is a target")
      << QByteArray("a,b,y\n1,2,3\n") << y << QStringList{"a", "y"} << "data.features"
      << "column \"y\" is a target, it cannot also be a feature";
  QTest::newRow("ambiguous column")
      << QByteArray("a,a,y\n1,2,3\n") << y << QStringList{"a"} << "data.features"
      << "column \"a\" is ambiguous: the header of f.csv has it as columns 1 and 2";
  QTest::newRow("no target") << QByteArray("a,y\n1,0\n") << QStringList{} << all << "data.target"
                             << "must name at least one column";
  QTest::newRow("target twice") << QByteArray("a,y\n1,0\n") << QStringList{"y", "y"} << all
                                << "data.target"
                                << "names column \"y\" twice";
  QTest::newRow("only targets") << QByteArray("a,y\n1,0\n") << QStringList{"a", "y"} << all
                                << "data.target"
                                << "leaves no feature columns: every column of f.csv is a target";
  QTest::newRow("empty file") << QByteArray() << y << all << "f.csv"
                              << "is empty: a header row is required";
  QTest::newRow("blank file") << QByteArray("\xEF\xBB\xBF\r\n\n  \n") << y << all << "f.csv"
                              << "is empty: a header row is required";
  QTest::newRow("empty file, no target yet") << QByteArray() << QStringList{} << all << "f.csv"
                                             << "is empty: a header row is required";
  QTest::newRow("binary file")
      << QByteArray("PK\x03\x04\n\x00\x00,y\n", 11) << y << all << "f.csv"
      << "is not a text file: it holds NUL bytes (the first on line 2); a CSV "
         "file is UTF-8 text";
  QTest::newRow("Latin-1 file")
      << QByteArray("caf\xe9,y\n1,0\n") << y << all << "f.csv"
      << "is not UTF-8 text: line 1 has bytes that are not UTF-8 (a Latin-1 "
         "file?); save it as UTF-8 CSV";
  QTest::newRow("header only") << QByteArray("a,y\n\n") << y << all << "f.csv"
                               << "has a header row but no data rows";
  QTest::newRow("unclosed quote") << QByteArray("a,y\n1,0\n2,\"1\n3,0\n") << y << all
                                  << "f.csv:3:2 (y)"
                                  << "has an opening quote that is never closed";
  QTest::newRow("text after closing quote")
      << QByteArray("a,y\n1,0\n\"2\"x,1\n") << y << all << "f.csv:3:1 (a)"
      << "has text after its closing quote: \"x\"";
  QTest::newRow("row far past the header")
      << QByteArray("a,y\n1,0\n") + QByteArray("1,").repeated(100) + "1\n"
      << y << all << "f.csv:3"
      << "row has 101 fields, the header has 2";
  QTest::newRow("header wider than a CSV file may be")
      << QByteArray("a,").repeated(1'000'000) + "y\n1\n"
      << y << all << "f.csv:1"
      << "the header has 1000001 columns; a CSV file may have at most 1000000";
  QTest::newRow("column past the header")
      << QByteArray("a,y\n1,0,\"7\"8\n") << y << all << "f.csv:2:3"
      << "has text after its closing quote: \"8\"";
}

void TestCsv::errors() {
  QFETCH(QByteArray, content);
  QFETCH(QStringList, target);
  QFETCH(QStringList, features);
  QFETCH(QString, place);
  QFETCH(QString, message);
  write("f.csv", content);
  std::vector<std::string> t;
  std::vector<std::string> f;
  for (const QString& s : target) t.push_back(s.toStdString());
  for (const QString& s : features) f.push_back(s.toStdString());
  const auto e = error_of([&] { read_csv_dataset(csv_spec("f.csv", t, f), dir()); });
  QVERIFY(e.has_value());
  QCOMPARE(QString::fromStdString(e->place()), place);
  QCOMPARE(QString::fromStdString(e->message()), message);
}

void TestCsv::header_description_hints_the_delimiter() {
  QCOMPARE(describe_csv_header({"a,b,y"}, ';', "y"),
           std::string("its header is one column, \"a,b,y\", which looks \",\"-separated: set the "
                       "delimiter to \",\""));
  // The delimiter whose parts hold the name looked for; the one in use is never suggested.
  QCOMPARE(describe_csv_header({"a|b|c; d"}, ',', "d"),
           std::string("its header is one column, \"a|b|c; d\", which looks \";\"-separated: set "
                       "the delimiter to \";\""));
  QCOMPARE(describe_csv_header({"a;b"}, ';', "b"), std::string("its header has: a;b"));
  QCOMPARE(describe_csv_header({"a", "b;c"}, ',', "c"), std::string("its header has: a, b;c"));
  // A one-column file whose name holds a comma, and a name it does not hold: no hint.
  QCOMPARE(describe_csv_header({"Preis, EUR"}, ';', "price"),
           std::string("its header has: Preis, EUR"));
}

void TestCsv::missing_file() {
  const auto e = error_of([&] { read_csv_dataset(csv_spec("data/nope.csv", {"y"}), dir()); });
  QVERIFY(e.has_value());
  QCOMPARE(QString::fromStdString(e->place()), QString("data/nope.csv"));
  QCOMPARE(QString::fromStdString(e->message()),
           QString("cannot be opened: No such file or directory"));
  const auto d = error_of([&] { read_csv_table(dir(), ','); });
  QVERIFY(d.has_value());
  QCOMPARE(QString::fromStdString(d->message()),
           QString("cannot be opened: it is a directory, not a CSV file"));
}

void TestCsv::table_error_names_the_path() {
  write("t.csv", "p,q\n1,2\n3,four\n");
  const std::filesystem::path file = dir() / "t.csv";
  const auto e = error_of([&] { read_csv_table(file); });
  QVERIFY(e.has_value());
  QCOMPARE(QString::fromStdString(e->place()), QString::fromStdString(file.string()) + ":3:2 (q)");
  QCOMPARE(QString::fromStdString(e->message()), QString("is not a number: \"four\""));
}

QTEST_GUILESS_MAIN(TestCsv)
#include "tst_csv.moc"
