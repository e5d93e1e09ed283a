// model.summary() text against Keras 3's. Goldens are either quoted from real Keras 3 output
// (where it was found is named at each) or rendered by rich 13.3.1 (Debian python3-rich) with
// the table Keras's print_summary builds: Table(Column("Layer (type)", width=34),
// Column("Output Shape", width=26), Column("Param #", justify="right", width=16),
// width=76, show_lines=True) for line_length 76, printed to a non-terminal console.
#include <QTest>
#include <string>

#include "core/training/summary_format.h"

using fitbench::format_summary;
using fitbench::format_thousands;
using fitbench::readable_memory_size;
using fitbench::summary_line_length;
using fitbench::SummaryRow;

namespace {

constexpr auto None = std::nullopt;

// Everything after the first line (the goldens quoted without their "Model:" line).
std::string without_title(const std::string& s) { return s.substr(s.find('\n') + 1); }

}  // namespace

class TestSummaryFormat : public QObject {
  Q_OBJECT

 private slots:
  void one_dense_layer() {
    // Sequential([Input((4,)), Dense(1, activation="sigmoid")]): 4 * 1 + 1 = 5 float32 params
    // = 20 bytes. Rendered by rich as described at the top.
    const std::string expected = R"(Model: "sequential"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ dense (Dense)                   │ (None, 1)              │             5 │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 5 (20.00 B)
 Trainable params: 5 (20.00 B)
 Non-trainable params: 0 (0.00 B)
)";
    QCOMPARE(format_summary("sequential", {{"dense", "Dense", {None, 1}, 5}}, 5, 0, std::nullopt),
             expected);
  }

  void optimizer_params_line() {
    // After fit() with SGD: optimizer.variables are the int64 iteration counter (8 B) and the
    // float32 learning rate (4 B): "2 (12.00 B)", as in many Keras 3 summaries; the total adds
    // them: 7 params, 20 + 12 = 32 bytes.
    const std::string s =
        format_summary("sequential", {{"dense", "Dense", {None, 1}, 5}}, 5, 0, int64_t{2});
    QVERIFY(s.find(" Total params: 7 (32.00 B)\n Trainable params: 5 (20.00 B)\n"
                   " Non-trainable params: 0 (0.00 B)\n Optimizer params: 2 (12.00 B)\n") !=
            std::string::npos);
  }

  void three_layers_real_output() {
    // Quoted from a Keras 3 run printed in a public report (soil-nutrient classifier,
    // "--- Ringkasan Model ---"): Dense 4->8, 8->4, 4->1.
    const std::string expected = R"(Model: "sequential"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ Hidden_Layer_1 (Dense)          │ (None, 8)              │            40 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ Hidden_Layer_2 (Dense)          │ (None, 4)              │            36 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ Output_Layer (Dense)            │ (None, 1)              │             5 │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 81 (324.00 B)
 Trainable params: 81 (324.00 B)
 Non-trainable params: 0 (0.00 B)
)";
    const std::vector<SummaryRow> rows = {{"Hidden_Layer_1", "Dense", {None, 8}, 40},
                                          {"Hidden_Layer_2", "Dense", {None, 4}, 36},
                                          {"Output_Layer", "Dense", {None, 1}, 5}};
    QCOMPARE(format_summary("sequential", rows, 81, 0, std::nullopt), expected);
  }

  void thousands_in_table_and_megabytes() {
    // Dense 1110->1111 (1,234,321), Dropout, Dense 1111->10 (11,120), trained with Adam
    // (2 * 1,245,441 slots + 2). Rendered by rich as described at the top.
    const std::string expected = R"(Model: "sequential_1"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ dense (Dense)                   │ (None, 1111)           │     1,234,321 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dropout (Dropout)               │ (None, 1111)           │             0 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense_1 (Dense)                 │ (None, 10)             │        11,120 │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 3,736,325 (14.25 MB)
 Trainable params: 1,245,441 (4.75 MB)
 Non-trainable params: 0 (0.00 B)
 Optimizer params: 2,490,884 (9.50 MB)
)";
    const std::vector<SummaryRow> rows = {{"dense", "Dense", {None, 1111}, 1234321},
                                          {"dropout", "Dropout", {None, 1111}, 0},
                                          {"dense_1", "Dense", {None, 10}, 11120}};
    QCOMPARE(format_summary("sequential_1", rows, 1245441, 0, int64_t{2490884}), expected);
  }

  void kilobytes_real_output() {
    // Quoted from a Keras 3 summary of a loaded Fashion-MNIST model in a public notebook write-up
    // (title line not quoted): 111,146 * 4 + 12 bytes = 434.18 KB.
    const std::string expected =
        R"(┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ flatten_1 (Flatten)             │ (None, 784)            │             0 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense_2 (Dense)                 │ (None, 128)            │       100,480 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense_3 (Dense)                 │ (None, 64)             │         8,256 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense_4 (Dense)                 │ (None, 32)             │         2,080 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ dense_5 (Dense)                 │ (None, 10)             │           330 │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 111,148 (434.18 KB)
 Trainable params: 111,146 (434.16 KB)
 Non-trainable params: 0 (0.00 B)
 Optimizer params: 2 (12.00 B)
)";
    const std::vector<SummaryRow> rows = {{"flatten_1", "Flatten", {None, 784}, 0},
                                          {"dense_2", "Dense", {None, 128}, 100480},
                                          {"dense_3", "Dense", {None, 64}, 8256},
                                          {"dense_4", "Dense", {None, 32}, 2080},
                                          {"dense_5", "Dense", {None, 10}, 330}};
    QCOMPARE(without_title(format_summary("sequential", rows, 111146, 0, int64_t{2})), expected);
  }

  void wide_terminal_and_wrapped_class_real_output() {
    // Quoted from a terminal session of a Keras 3 run (cat/dog transfer learning, terminal wider
    // than 92 columns, so line_length = 88): a name too long for its column wraps at the space.
    const std::string expected = R"(Model: "sequential"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━┓
┃ Layer (type)                         ┃ Output Shape                ┃         Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━┩
│ mobilenetv2_1.00_224 (Functional)    │ (None, 7, 7, 1280)          │       2,257,984 │
├──────────────────────────────────────┼─────────────────────────────┼─────────────────┤
│ global_average_pooling2d             │ (None, 1280)                │               0 │
│ (GlobalAveragePooling2D)             │                             │                 │
├──────────────────────────────────────┼─────────────────────────────┼─────────────────┤
│ dropout (Dropout)                    │ (None, 1280)                │               0 │
├──────────────────────────────────────┼─────────────────────────────┼─────────────────┤
│ dense (Dense)                        │ (None, 1)                   │           1,281 │
└──────────────────────────────────────┴─────────────────────────────┴─────────────────┘
 Total params: 2,261,829 (8.63 MB)
 Trainable params: 1,281 (5.00 KB)
 Non-trainable params: 2,257,984 (8.61 MB)
 Optimizer params: 2,564 (10.02 KB)
)";
    const std::vector<SummaryRow> rows = {
        {"mobilenetv2_1.00_224", "Functional", {None, 7, 7, 1280}, 2257984},
        {"global_average_pooling2d", "GlobalAveragePooling2D", {None, 1280}, 0},
        {"dropout", "Dropout", {None, 1280}, 0},
        {"dense", "Dense", {None, 1}, 1281}};
    QCOMPARE(format_summary("sequential", rows, 1281, 2257984, int64_t{2564}, 4, 88), expected);
  }

  void long_cells_wrap_and_truncate() {
    // Rendered by rich as described at the top: a word longer than its column is cut with "…",
    // the class name goes to the next line; a long shape wraps at ", "; a long count is cut.
    const std::string expected = R"(Model: "my_model"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ a_really_quite_long_layer_name… │ (None, 3)              │            15 │
│ (Dense)                         │                        │               │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ average_pooling2d_2             │ (None, 124, 124, 6)    │             0 │
│ (AveragePooling2D)              │                        │               │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ x (Dense)                       │ (None, 12345678,       │ 123,456,789,… │
│                                 │ 12345678, 12345678, 3) │               │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 15 (60.00 B)
 Trainable params: 15 (60.00 B)
 Non-trainable params: 0 (0.00 B)
)";
    const std::vector<SummaryRow> rows = {
        {"a_really_quite_long_layer_name_for_wrapping", "Dense", {None, 3}, 15},
        {"average_pooling2d_2", "AveragePooling2D", {None, 124, 124, 6}, 0},
        {"x", "Dense", {None, 12345678, 12345678, 12345678, 3}, 123456789012345}};
    QCOMPARE(format_summary("my_model", rows, 15, 0, std::nullopt), expected);
  }

  void wide_and_combining_characters() {
    // Rendered by rich as described at the top: an emoji or a CJK character takes two cells, an
    // accent on its letter none; a cut never halves a character.
    const std::string expected = R"(Model: "names"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ 🔥_dense (Dense)                │ (None, 3)              │            15 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ 隐藏层隐藏层隐藏层隐藏层隐藏层… │ (None, 2)              │             8 │
│ (Dense)                         │                        │               │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ café_layer (Dense)              │ (None, 1)              │             3 │
├─────────────────────────────────┼────────────────────────┼───────────────┤
│ 🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥🔥… │ (None, 1)              │             2 │
│ (Dense)                         │                        │               │
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 28 (112.00 B)
 Trainable params: 28 (112.00 B)
 Non-trainable params: 0 (0.00 B)
)";
    const std::vector<SummaryRow> rows = {
        {"\U0001F525_dense", "Dense", {None, 3}, 15},
        {"\u9690\u85CF\u5C42\u9690\u85CF\u5C42\u9690\u85CF\u5C42\u9690\u85CF\u5C42\u9690"
         "\u85CF\u5C42\u9690\u85CF\u5C42",
         "Dense",
         {None, 2},
         8},
        {"cafe\u0301_layer", "Dense", {None, 1}, 3},
        {"\U0001F525\U0001F525\U0001F525\U0001F525\U0001F525\U0001F525\U0001F525\U0001F525"
         "\U0001F525\U0001F525\U0001F525\U0001F525\U0001F525\U0001F525\U0001F525\U0001F525x",
         "Dense",
         {None, 1},
         2}};
    QCOMPARE(format_summary("names", rows, 28, 0, std::nullopt), expected);
  }

  void no_layers() {
    // Rendered by rich: the header rule is followed by the bottom rule.
    const std::string expected = R"(Model: "empty"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ Layer (type)                    ┃ Output Shape           ┃       Param # ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
└─────────────────────────────────┴────────────────────────┴───────────────┘
 Total params: 0 (0.00 B)
 Trainable params: 0 (0.00 B)
 Non-trainable params: 0 (0.00 B)
)";
    QCOMPARE(format_summary("empty", {}, 0, 0, std::nullopt), expected);
  }

  void unknown_shape_prints_a_question_mark() {
    // Keras's format_layer_shape: "?" for a layer that was not built (and fitbench's window
    // for one after a layer that cannot take its input).
    const std::string s =
        format_summary("sequential", {{"dense", "Dense", {}, 0}}, 0, 0, std::nullopt);
    QVERIFY2(
        s.find("│ dense (Dense)                   │ ?                      │             0 │") !=
            std::string::npos,
        s.c_str());
  }

  void thousands_data() {
    QTest::addColumn<qint64>("n");
    QTest::addColumn<QString>("expected");
    QTest::newRow("0") << qint64(0) << "0";
    QTest::newRow("999") << qint64(999) << "999";
    QTest::newRow("1000") << qint64(1000) << "1,000";
    QTest::newRow("1234567") << qint64(1234567) << "1,234,567";
    QTest::newRow("100480") << qint64(100480) << "100,480";
    QTest::newRow("negative") << qint64(-1234567) << "-1,234,567";
    QTest::newRow("-100") << qint64(-100) << "-100";
  }

  void thousands() {
    QFETCH(qint64, n);
    QFETCH(QString, expected);
    QCOMPARE(QString::fromStdString(format_thousands(n)), expected);
  }

  void memory_size_data() {
    QTest::addColumn<double>("bytes");
    QTest::addColumn<QString>("expected");
    // 1 KB = 1024 B; the unit changes once the value reaches 1024 of the previous one.
    QTest::newRow("0") << 0.0 << "0.00 B";
    QTest::newRow("1023") << 1023.0 << "1023.00 B";
    QTest::newRow("1024") << 1024.0 << "1.00 KB";
    QTest::newRow("1536") << 1536.0 << "1.50 KB";
    QTest::newRow("444596") << 444596.0 << "434.18 KB";  // 444596 / 1024 = 434.1758
    QTest::newRow("1 MB") << 1048576.0 << "1.00 MB";
    QTest::newRow("5 GB") << 5.0 * 1024 * 1024 * 1024 << "5.00 GB";
  }

  void memory_size() {
    QFETCH(double, bytes);
    QFETCH(QString, expected);
    QCOMPARE(QString::fromStdString(readable_memory_size(bytes)), expected);
  }

  void line_length_from_terminal() {
    // min(88, columns - 4); never below 20, where the columns would be narrower than Keras allows.
    QCOMPARE(summary_line_length(80), 76);
    QCOMPARE(summary_line_length(91), 87);
    QCOMPARE(summary_line_length(92), 88);
    QCOMPARE(summary_line_length(200), 88);
    QCOMPARE(summary_line_length(10), 20);
  }
};

QTEST_GUILESS_MAIN(TestSummaryFormat)
#include "tst_summary_format.moc"
