// DataPanel: the generator picker, generator fields, CSV import, validation split and preview.

#include "ui/panels/data_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QLocale>
#include <QPainter>
#include <QRandomGenerator>
#include <QRegularExpressionValidator>
#include <QResizeEvent>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <charconv>
#include <limits>

#include "core/base/error.h"
#include "core/distribution/layout/device_plan.h"
#include "core/training/teaching_checks.h"
#include "ui/common/field_error.h"
#include "ui/common/field_range.h"
#include "ui/common/number_spin_box.h"
#include "ui/panels/csv_preview.h"
#include "ui/panels/data_scatter.h"
#include "ui/panels/image_gallery.h"

namespace fitbench {
namespace {

struct GeneratorInfo {
  const char* name;
  const char* label;
  const char* about;
  const char* noise;  // what noise does; nullptr when the set has none
};

// The sets as core/data/generators.cpp makes them; then the list has "CSV file…" and
// Fashion-MNIST.
constexpr GeneratorInfo kGenerators[] = {
    {"seed", "seed",
     "The seed example's data: x ~ N(0, 1), label 1 where x0 > 0 (NumPy's "
     "np.random.default_rng(seed).normal).",
     nullptr},
    {"seed_legacy", "legacy seed",
     "The seed set from NumPy's legacy generator "
     "(np.random.seed(seed); np.random.normal).",
     nullptr},
    {"circle", "circle", "Playground: class 1 inside a circle, class 0 in a ring around it.",
     "Moves the point each label is read at by up to ±5 × noise per axis, so labels near the "
     "boundary flip (the Playground's noise % / 100: 0 to 0.5)."},
    {"xor", "xor", "Playground (exclusive or): class 1 where x and y have the same sign.",
     "Moves the point each label is read at by up to ±5 × noise per axis (0 to 0.5)."},
    {"gaussian", "gaussian", "Playground: two Gaussian clouds around (2, 2) and (-2, -2).",
     "Widens both clouds: variance 0.5 + 7 × noise (0 to 0.5)."},
    {"spiral", "spiral", "Playground: two interleaved spiral arms.",
     "Moves each coordinate by up to ±noise (0 to 0.5)."},
    {"moons", "moons", "Two interleaving half circles (as sklearn's make_moons).",
     "Standard deviation of the Gaussian noise added to every coordinate."},
    {"blobs", "blobs", "Gaussian clusters, one per class, centres uniform in [-10, 10].",
     "Added to each cluster's standard deviation (1 + noise)."},
    {"plane", "regression (plane)", "Regression (Playground): target (x + y) / 10 on [-6, 6]².",
     "Reads the target at the point moved by up to ±6 × noise per axis (0 to 0.5)."},
    {"sine", "regression (sine)", "Regression: target sin(x) for x in [-3, 3].",
     "Standard deviation of the Gaussian noise added to sin(x)."},
};
constexpr int kCsvRow = static_cast<int>(std::size(kGenerators));
constexpr int kFashionRow = kCsvRow + 1;
constexpr int kFolderRow = kFashionRow + 1;
constexpr int kIcon = 56;
constexpr int kMaxCsvClasses = 20;  // an integer CSV target 0..19 is read as class indices

const GeneratorInfo* findGenerator(const std::string& name) {
  for (const GeneratorInfo& g : kGenerators) {
    if (name == g.name) return &g;
  }
  return nullptr;
}

bool usesFeatures(const std::string& g) {
  return g == "seed" || g == "seed_legacy" || g == "blobs";
}
int fixedFeatures(const std::string& g) { return g == "sine" ? 1 : 2; }

// Generators by name; a CSV target by its values: one-hot columns, or integer labels 0..19.
int classCountOf(const DataSpec& spec, const Dataset& data) {
  if (!spec.dataset.empty()) return static_cast<int>(fashion_mnist_classes().size());
  if (!spec.directory.empty()) return static_cast<int>(data.class_names.size());
  if (spec.csv.empty()) {
    if (spec.generator == "plane" || spec.generator == "sine") return 0;
    return spec.generator == "blobs" ? static_cast<int>(spec.classes) : 2;
  }
  const auto y = data.y.array();
  if (y.rows() == 0 || y.cols() == 0 || !(y == y.round()).all() || y.minCoeff() < 0.0f) return 0;
  if (y.cols() > 1) {
    const bool oneHot = y.maxCoeff() <= 1.0f && (y.rowwise().sum() == 1.0f).all();
    return oneHot ? static_cast<int>(y.cols()) : 0;
  }
  const int top = static_cast<int>(y.maxCoeff());
  return top < kMaxCsvClasses ? std::max(2, top + 1) : 0;
}

QPixmap csvIcon(int size) {
  QPixmap pixmap(size, size);
  pixmap.fill(QColor(0xfa, 0xfa, 0xfa));
  QPainter p(&pixmap);
  p.setPen(QColor(0xc8, 0xc8, 0xc8));
  p.drawRect(0, 0, size - 1, size - 1);
  const int cell = size / 6, left = size / 6, top = size / 4;
  p.fillRect(left, top, 4 * cell, cell, QColor(0x0877bd));
  p.setPen(QColor(0x90, 0x90, 0x90));
  for (int r = 0; r <= 4; ++r) p.drawLine(left, top + r * cell, left + 4 * cell, top + r * cell);
  for (int c = 0; c <= 4; ++c) p.drawLine(left + c * cell, top, left + c * cell, top + 4 * cell);
  return pixmap;
}

// A 3 x 3 mosaic of small pictures, for the image data set's place in the list (drawn: reading the
// real images would cost every window a file read).
QPixmap imagesIcon(int size) {
  QPixmap pixmap(size, size);
  pixmap.fill(QColor(0xfa, 0xfa, 0xfa));
  QPainter p(&pixmap);
  p.setRenderHint(QPainter::Antialiasing);
  const int cell = size / 3;
  for (int i = 0; i < 9; ++i) {
    const QRectF box((i % 3) * cell + 2, (i / 3) * cell + 2, cell - 4, cell - 4);
    p.setPen(QColor(0xc8, 0xc8, 0xc8));
    p.setBrush(Qt::white);
    p.drawRect(box);
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(0x30 + 0x10 * i, 0x30 + 0x10 * i, 0x30 + 0x10 * i));
    if (i % 2 == 0)
      p.drawRoundedRect(box.adjusted(3, 2, -3, -2), 2, 2);  // a shirt-like block
    else
      p.drawEllipse(box.adjusted(2, 4, -2, -4));  // a bag-like blob
  }
  p.setPen(QColor(0x0877bd));
  p.setBrush(Qt::NoBrush);  // the frame only (the last tile's brush would cover the mosaic)
  p.drawRect(0, 0, size - 1, size - 1);
  return pixmap;
}

// A folder with pictures in it, for "Folder of images…".
QPixmap folderIcon(int size) {
  QPixmap pixmap(size, size);
  pixmap.fill(QColor(0xfa, 0xfa, 0xfa));
  QPainter p(&pixmap);
  p.setRenderHint(QPainter::Antialiasing);
  const QColor folder(0xf2, 0xb4, 0x4c);
  p.setPen(folder.darker(130));
  p.setBrush(folder);
  const qreal s = size;
  p.drawRoundedRect(QRectF(s * 0.08, s * 0.22, s * 0.36, s * 0.16), 2, 2);  // the tab
  p.drawRoundedRect(QRectF(s * 0.08, s * 0.30, s * 0.84, s * 0.56), 3, 3);
  const QColor tiles[] = {QColor(0x0877bd), QColor(0xe6, 0x51, 0x00), QColor(0x43, 0xa0, 0x47)};
  for (int i = 0; i < 3; ++i) {
    p.setPen(Qt::white);
    p.setBrush(tiles[i]);
    p.drawRect(QRectF(s * (0.16 + 0.24 * i), s * 0.44, s * 0.2, s * 0.24));
  }
  return pixmap;
}

}  // namespace

DataPanel::DataPanel(QWidget* parent) : QWidget(parent) {
  m_previewTimer = new QTimer(this);
  m_previewTimer->setSingleShot(true);
  m_previewTimer->setInterval(60);
  buildGeneratorList();
  auto* pick = new QGroupBox(tr("Data set"));
  auto* pickLayout = new QVBoxLayout(pick);
  pickLayout->addWidget(m_generators);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(pick);
  layout->addWidget(buildGeneratorGroup());
  layout->addWidget(buildCsvGroup());
  layout->addWidget(buildDatasetGroup());
  layout->addWidget(buildFolderGroup());
  layout->addWidget(buildOptionsGroup());
  layout->addWidget(buildPreviewGroup(), 1);
  connectSignals();
  setSpec(DataSpec{});
}

void DataPanel::buildGeneratorList() {
  m_generators = new QListWidget;
  m_generators->setObjectName("generatorList");
  m_generators->setViewMode(QListView::IconMode);
  m_generators->setIconSize(QSize(kIcon, kIcon));
  m_generators->setGridSize(QSize(kIcon + 26, kIcon + 38));
  m_generators->setMovement(QListView::Static);
  m_generators->setResizeMode(QListView::Adjust);
  m_generators->setWordWrap(true);
  m_generators->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  m_generators->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  m_generators->setFrameShape(QFrame::NoFrame);
  m_generators->viewport()->setAutoFillBackground(false);
  for (const GeneratorInfo& g : kGenerators) {
    DataSpec s;
    s.generator = g.name;
    s.samples = 240;
    s.noise = s.generator == "moons" ? 0.08 : s.generator == "sine" ? 0.1 : 0.0;
    s.features = 2;
    const Dataset data = generate_dataset(s);
    auto* item = new QListWidgetItem(
        QIcon(DataScatter::thumbnail(data, classCountOf(s, data), kIcon)), tr(g.label));
    item->setData(Qt::UserRole, QString::fromLatin1(g.name));
    item->setToolTip(tr(g.about));
    m_generators->addItem(item);
  }
  auto* csv = new QListWidgetItem(QIcon(csvIcon(kIcon)), tr("CSV file…"));
  csv->setToolTip(tr("Your own data: a CSV file with a header row and numbers in every cell."));
  m_generators->addItem(csv);
  auto* fashion = new QListWidgetItem(QIcon(imagesIcon(kIcon)), tr("Fashion-MNIST"));
  fashion->setToolTip(
      tr("70,000 grayscale 28 x 28 images of clothing in 10 classes (keras.datasets."
         "fashion_mnist), from Debian's dataset-fashion-mnist package; each sample is a 28 x 28 "
         "image (784 values: add a Flatten before the first Dense)."));
  fashion->setData(Qt::UserRole, QStringLiteral("fashion_mnist"));
  m_generators->addItem(fashion);
  auto* folder = new QListWidgetItem(QIcon(folderIcon(kIcon)), tr("Folder of images…"));
  folder->setToolTip(
      tr("Your own pictures: a folder with one subfolder per class, read as "
         "keras.utils.image_dataset_from_directory reads it."));
  folder->setData(Qt::UserRole, QStringLiteral("directory"));
  m_generators->addItem(folder);
  m_generators->installEventFilter(this);
}

QGroupBox* DataPanel::buildGeneratorGroup() {
  m_generatorGroup = new QGroupBox(tr("Generator"));
  m_samples = new QSpinBox;
  m_samples->setObjectName("samples");
  takeAnyInt(m_samples);  // data.samples' own check speaks (core's generators)
  m_samples->setGroupSeparatorShown(true);
  m_tips[m_samples] = tr("How many rows the generator draws.");
  m_noise = new NumberSpinBox;
  m_noise->setObjectName("noise");
  m_noise->setSingleStep(0.05);
  m_seed = new QLineEdit;
  m_seed->setObjectName("seed");
  m_seed->setValidator(
      new QRegularExpressionValidator(QRegularExpression(QStringLiteral("[0-9]{0,20}")), m_seed));
  m_tips[m_seed] = tr("The generator's own seed: the same seed gives the same data.");
  m_newSeed = new QToolButton;
  m_newSeed->setText(tr("New"));
  m_newSeed->setToolTip(tr("Draw a new random seed"));
  auto* seedRow = new QHBoxLayout;
  seedRow->setContentsMargins(0, 0, 0, 0);
  seedRow->addWidget(m_seed, 1);
  seedRow->addWidget(m_newSeed);
  m_features = new QSpinBox;
  m_features->setObjectName("features");
  takeAnyInt(m_features);
  m_classes = new QSpinBox;
  m_classes->setObjectName("classes");
  takeAnyInt(m_classes);
  m_tips[m_classes] = tr("How many clusters (one per class) the blobs set has.");
  m_generatorError = makeFieldErrorLabel();
  m_generatorError->setObjectName("generatorError");

  m_generatorForm = new QFormLayout(m_generatorGroup);
  m_generatorForm->addRow(tr("Samples"), m_samples);
  m_generatorForm->addRow(tr("Noise"), m_noise);
  m_generatorForm->addRow(tr("Seed"), seedRow);
  m_generatorForm->addRow(tr("Features"), m_features);
  m_generatorForm->addRow(tr("Classes"), m_classes);
  m_generatorForm->addRow(m_generatorError);
  return m_generatorGroup;
}

QGroupBox* DataPanel::buildCsvGroup() {
  m_csvGroup = new QGroupBox(tr("CSV file"));
  m_csv = new CsvPreview;
  auto* layout = new QVBoxLayout(m_csvGroup);
  layout->addWidget(m_csv);
  return m_csvGroup;
}

QGroupBox* DataPanel::buildDatasetGroup() {
  m_datasetGroup = new QGroupBox(tr("Fashion-MNIST"));
  m_subset = new QSpinBox;
  m_subset->setObjectName("subset");
  // 0 is "all"; more than there are is all of them too, as x_train[:n] is.
  m_subset->setRange(0, std::numeric_limits<int>::max());
  m_subset->setSingleStep(1000);
  m_subset->setGroupSeparatorShown(true);
  m_subset->setSpecialValueText(tr("all 60,000"));
  m_subset->setKeyboardTracking(false);  // one load per value, not per digit typed
  m_tips[m_subset] =
      tr("Train on the first images only (x_train[:n]); fewer images train faster "
         "and show overfitting sooner.");
  m_scale = new QCheckBox(tr("Scale pixels to [0, 1]"));
  m_scale->setObjectName("scale");
  m_tips[m_scale] = tr("Divide the 0-255 pixel values by 255, as Keras's tutorial does.");
  m_validateOnTest = new QCheckBox(tr("Validate on the 10,000 test images"));
  m_validateOnTest->setObjectName("validateOnTest");
  m_tips[m_validateOnTest] =
      tr("Keras's validation_data=(x_test, y_test): the val_ curves are the test images'. The "
         "validation split is then unused.");
  m_datasetError = makeFieldErrorLabel();
  m_datasetError->setObjectName("datasetError");
  auto* form = new QFormLayout(m_datasetGroup);
  form->addRow(tr("Training images"), m_subset);
  form->addRow(m_scale);
  form->addRow(m_validateOnTest);
  form->addRow(m_datasetError);
  return m_datasetGroup;
}

QGroupBox* DataPanel::buildOptionsGroup() {
  auto* group = new QGroupBox(tr("Training data"));
  // Keras's range, [0, 1) (1 less 10^-12, the field's finest step); NumberSpinBox shows and
  // keeps a file's 0.333333 as it is.
  m_split = new NumberSpinBox;
  m_split->setObjectName("validationSplit");
  // fit.validation_split's check (checkSplit) says what it takes.
  m_split->setRange(std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max());
  m_split->setSingleStep(0.05);
  m_tips[m_split] =
      tr("The last fraction of the rows is kept for validation, as Keras's validation_split "
         "(taken before shuffling). Drawn hollow in the preview.");
  m_standardize = new QCheckBox(tr("Standardize features"));
  m_standardize->setObjectName("standardize");
  m_tips[m_standardize] =
      tr("Subtract each feature's mean and divide by its standard deviation, both computed on the "
         "training rows (as sklearn's StandardScaler).");
  m_splitError = makeFieldErrorLabel();
  m_splitError->setObjectName("splitError");
  auto* form = new QFormLayout(group);
  form->addRow(tr("Validation split"), m_split);
  form->addRow(m_splitError);
  form->addRow(m_standardize);
  m_scaleWarning = new QLabel;
  m_scaleWarning->setObjectName("scaleWarning");
  m_scaleWarning->setWordWrap(true);
  m_scaleWarning->setStyleSheet(QStringLiteral("color: #e65100;"));
  m_scaleWarning->hide();
  form->addRow(m_scaleWarning);
  return group;
}

QGroupBox* DataPanel::buildPreviewGroup() {
  auto* group = m_previewGroup = new QGroupBox(tr("Preview"));
  m_scatter = new DataScatter;
  m_scatter->setObjectName("scatter");
  m_gallery = new ImageGallery;
  m_gallery->setObjectName("gallery");
  auto* layout = new QVBoxLayout(group);
  layout->addWidget(m_scatter);
  layout->addWidget(m_gallery);
  return group;
}

void DataPanel::connectSignals() {
  connect(m_generators, &QListWidget::currentRowChanged, this, &DataPanel::onGeneratorPicked);
  connect(m_generators, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
    if (m_generators->row(item) == kCsvRow && m_edited.csv.empty()) m_csv->browse();
  });
  const auto edit = [this](auto apply) {
    return [this, apply](auto value) {
      if (m_filling) return;
      apply(value);
      commitEdit();
    };
  };
  connect(m_samples, &QSpinBox::valueChanged, this, edit([this](int v) { m_edited.samples = v; }));
  connect(m_noise, &QDoubleSpinBox::valueChanged, this,
          edit([this](double v) { m_edited.noise = v; }));
  connect(m_features, &QSpinBox::valueChanged, this,
          edit([this](int v) { m_edited.features = v; }));
  connect(m_classes, &QSpinBox::valueChanged, this, edit([this](int v) { m_edited.classes = v; }));
  connect(m_standardize, &QCheckBox::toggled, this,
          edit([this](bool on) { m_edited.standardize = on; }));
  connect(m_subset, &QSpinBox::valueChanged, this, edit([this](int v) { m_edited.subset = v; }));
  connect(m_scale, &QCheckBox::toggled, this, edit([this](bool on) { m_edited.scale = on; }));
  connect(m_validateOnTest, &QCheckBox::toggled, this, edit([this](bool on) {
            m_edited.validation_test = on;
            // The test images validate: fit.validation_split must be 0 (read_experiment).
            if (on) setValidationSplit(0.0);
            updateFieldStates();
          }));
  connect(m_seed, &QLineEdit::textEdited, this, &DataPanel::onSeedEdited);
  connect(m_newSeed, &QToolButton::clicked, this, [this] {
    m_seed->setText(QString::number(QRandomGenerator::global()->bounded(1'000'000)));
    onSeedEdited(m_seed->text());
  });
  connect(m_split, &QDoubleSpinBox::valueChanged, this, [this](double v) {
    if (m_filling) return;
    m_validationSplit = v;
    checkSplit();
    showErrors();
    m_previewTimer->start();
    emit changed();
  });
  connect(m_csv, &CsvPreview::fileChosen, this, &DataPanel::loadCsvFile);
  connect(m_csv, &CsvPreview::delimiterEdited, this, &DataPanel::onCsvDelimiterEdited);
  connect(m_csv, &CsvPreview::rolesEdited, this, &DataPanel::onCsvRolesEdited);
  connect(m_previewTimer, &QTimer::timeout, this, &DataPanel::refreshPreview);
  connectFolderSignals();
}

// The list shows every item without a scroll bar: as many rows as its width needs.
bool DataPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_generators && event->type() == QEvent::Resize) {
    const QSize grid = m_generators->gridSize();
    const int width = static_cast<QResizeEvent*>(event)->size().width();
    const int columns = std::max(1, (width - 2 * m_generators->frameWidth()) / grid.width());
    const int rows = (m_generators->count() + columns - 1) / columns;
    const int height = rows * grid.height() + 2 * m_generators->frameWidth() + 4;
    if (m_generators->height() != height) m_generators->setFixedHeight(height);
  }
  return QWidget::eventFilter(watched, event);
}

void DataPanel::setSpec(const DataSpec& spec) {
  m_spec = spec;
  m_edited = spec;
  m_lastCsv = spec.csv.empty() ? DataSpec{} : spec;
  m_folderMode = !spec.directory.empty();
  if (m_folderMode) m_lastFolder = spec.directory;
  m_loaded = false;
  m_data = Dataset{};
  m_classCount = 0;
  fillWidgets();
  reload();
}

void DataPanel::fillWidgets() {
  m_filling = true;
  int row = datasetMode() ? kFashionRow : folderMode() ? kFolderRow : kCsvRow;
  if (!csvMode() && !datasetMode() && !folderMode()) {
    const GeneratorInfo* g = findGenerator(m_edited.generator);
    row = g != nullptr ? static_cast<int>(g - kGenerators) : -1;
  }
  m_generators->setCurrentRow(row);
  m_samples->setValue(fieldInt(m_edited.samples));
  m_seed->setText(QString::number(m_edited.seed));
  m_classes->setValue(fieldInt(m_edited.classes));
  m_standardize->setChecked(m_edited.standardize);
  m_subset->setValue(fieldInt(m_edited.subset));
  m_scale->setChecked(m_edited.scale);
  m_validateOnTest->setChecked(m_edited.validation_test);
  fillFolderWidgets();
  if (csvMode()) {
    showCsvFile();
  } else {
    m_csv->clearFile();
  }
  updateFieldStates();
  m_filling = false;
}

void DataPanel::updateFieldStates() {
  const bool csv = csvMode(), dataset = datasetMode(), folder = folderMode();
  m_generatorGroup->setVisible(!csv && !dataset && !folder);
  m_csvGroup->setVisible(csv);
  m_datasetGroup->setVisible(dataset);
  m_folderGroup->setVisible(folder);
  m_scatter->setVisible(!dataset && !folder);
  m_gallery->setVisible(dataset || folder);
  const std::string& g = m_edited.generator;
  const GeneratorInfo* info = findGenerator(g);
  const bool noise = info != nullptr && info->noise != nullptr;
  const bool features = usesFeatures(g);
  {
    const QSignalBlocker block(m_noise);
    // data.noise's own check (core's generators) says what a generator takes.
    m_noise->setRange(std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max());
    m_noise->setValue(m_edited.noise);
  }
  m_tips[m_noise] =
      noise ? tr(info->noise) : tr("The %1 set has no noise setting.").arg(tr(g.c_str()));
  {
    const QSignalBlocker block(m_features);
    m_features->setValue(features ? fieldInt(m_edited.features) : fixedFeatures(g));
  }
  const QString label = tr(info != nullptr ? info->label : g.c_str());
  m_tips[m_features] = features                ? tr("How many features (columns of x) the set has.")
                       : fixedFeatures(g) == 1 ? tr("The %1 set always has 1 feature.").arg(label)
                                               : tr("The %1 set always has 2 features.").arg(label);
  m_generatorForm->setRowVisible(m_classes, g == "blobs");
  const bool editable = !m_readOnly;
  m_generators->setEnabled(editable);
  m_samples->setEnabled(editable);
  m_noise->setEnabled(editable && noise);
  m_seed->setReadOnly(!editable);
  m_newSeed->setEnabled(editable);
  m_features->setEnabled(editable && features);
  m_classes->setEnabled(editable);
  m_split->setEnabled(editable && !(dataset && m_edited.validation_test) && !folderValidates());
  m_standardize->setEnabled(editable);
  m_subset->setEnabled(editable);
  m_scale->setEnabled(editable);
  m_validateOnTest->setEnabled(editable);
  updateFolderStates(editable);
  m_csv->setReadOnly(m_readOnly);
  showErrors();
}

void DataPanel::onGeneratorPicked(int row) {
  if (m_filling || row < 0) return;
  if (row == kFolderRow) {
    if (folderMode()) return;
    if (csvMode()) m_lastCsv = m_edited;
    m_folderMode = true;
    m_edited.generator.clear();
    m_edited.csv.clear();
    m_edited.target.clear();
    m_edited.features_columns.clear();
    m_edited.dataset.clear();
    m_edited.directory = m_lastFolder;
    if (m_edited.image_validation_split > 0.0) setValidationSplit(0.0);
    m_filling = true;  // the widgets show m_edited; no edit
    fillFolderWidgets();
    m_filling = false;
  } else if (row == kFashionRow) {
    if (datasetMode()) return;
    if (csvMode()) m_lastCsv = m_edited;
    leaveFolder();
    m_edited.generator.clear();
    m_edited.csv.clear();
    m_edited.target.clear();
    m_edited.features_columns.clear();
    m_edited.dataset = "fashion_mnist";
  } else if (row == kCsvRow) {
    if (csvMode()) return;
    leaveFolder();
    m_edited.dataset.clear();
    m_edited.generator.clear();
    m_edited.csv = m_lastCsv.csv;
    m_edited.target = m_lastCsv.target;
    m_edited.features_columns = m_lastCsv.features_columns;
    m_edited.delimiter = m_lastCsv.delimiter;
    if (m_edited.csv.empty()) {
      m_csv->clearFile();
    } else {
      showCsvFile();
    }
  } else {
    if (csvMode()) m_lastCsv = m_edited;
    leaveFolder();
    m_edited.dataset.clear();
    m_edited.generator = kGenerators[row].name;
    m_edited.csv.clear();
    m_edited.target.clear();
    m_edited.features_columns.clear();
    m_edited.delimiter = ',';
  }
  updateFieldStates();
  commitEdit();
}

void DataPanel::onSeedEdited(const QString&) {
  if (m_filling) return;
  commitEdit();  // reload() reads the seed's text
}

void DataPanel::onCsvDelimiterEdited() {
  m_edited.delimiter = m_csv->delimiter();
  showCsvFile();
  commitEdit();
}

void DataPanel::onCsvRolesEdited() {
  m_edited.target = m_csv->targets();
  m_edited.features_columns = m_csv->features();
  commitEdit();
}

bool DataPanel::loadCsvFile(const QString& path) {
  if (m_readOnly) return false;
  const QString file = QDir::isAbsolutePath(path) || m_baseDir.isEmpty()
                           ? QFileInfo(path).absoluteFilePath()
                           : QDir(m_baseDir).absoluteFilePath(path);
  leaveFolder();
  m_edited.generator.clear();
  m_edited.dataset.clear();
  m_edited.csv = pathForSpec(QDir::cleanPath(file)).toStdString();
  m_edited.delimiter = CsvPreview::guessDelimiter(file);
  m_csv->showFile(file, QString::fromStdString(m_edited.csv), m_edited.delimiter);
  // The roles carry over by name; features no longer all present become "every other column".
  m_edited.target = m_csv->targetsOrDefault(m_edited.target);
  const std::vector<std::string> features = m_edited.features_columns;
  m_csv->setRoles(m_edited.target, features);
  m_edited.features_columns = m_csv->features();
  if (m_edited.features_columns.size() != features.size()) {
    m_edited.features_columns.clear();
    m_csv->setRoles(m_edited.target, {});
  }
  {
    const QSignalBlocker block(m_generators);
    m_generators->setCurrentRow(kCsvRow);
  }
  updateFieldStates();
  const bool ok = reload();
  emit changed();
  return ok;
}

void DataPanel::commitEdit() {
  reload();
  emit changed();
}

bool DataPanel::reload() {
  m_loadError.clear();
  m_loadPlace.clear();
  try {
    if (datasetMode()) {
      DataSpec s = m_edited;
      if (!s.dataset_dir.empty()) s.dataset_dir = resolvedCsv(s.dataset_dir).toStdString();
      m_data = load_dataset(s, {});
    } else if (folderMode()) {
      if (m_edited.directory.empty())
        throw InputError(
            "data.directory",
            tr("choose a folder of images, one subfolder per class (Browse…)").toStdString());
      DataSpec s = m_edited;
      s.directory = resolvedCsv(s.directory).toStdString();
      m_data = load_dataset(s, {});
      m_lastFolder = m_edited.directory;
    } else if (csvMode()) {
      if (m_edited.csv.empty()) {
        throw InputError(
            "data.csv", tr("choose a CSV file (Browse…, or drop one on the window)").toStdString());
      }
      m_data = read_csv_dataset(m_edited, m_baseDir.toStdString());
    } else {
      const std::string seed = m_seed->text().toStdString();
      uint64_t value = 0;
      const auto [end, ec] = std::from_chars(seed.data(), seed.data() + seed.size(), value);
      if (seed.empty() || ec != std::errc() || end != seed.data() + seed.size()) {
        throw InputError("data.seed", "must be an integer from 0 to 18446744073709551615");
      }
      m_edited.seed = value;
      m_data = generate_dataset(m_edited);
    }
    m_spec = m_edited;
    m_loaded = true;
    m_classCount = classCountOf(m_spec, m_data);
  } catch (const InputError& e) {
    m_loadError = QString::fromStdString(e.what());
    m_loadPlace = QString::fromStdString(e.place());
  } catch (const std::exception& e) {  // e.g. std::bad_alloc for an enormous set
    m_loadError = tr("The data could not be made: %1").arg(QString::fromLocal8Bit(e.what()));
  }
  checkSplit();
  showErrors();
  m_previewTimer->start();
  return m_loadError.isEmpty();
}

void DataPanel::showCsvFile() {
  m_csv->showFile(resolvedCsv(m_edited.csv), QString::fromStdString(m_edited.csv),
                  m_edited.delimiter);
  m_csv->setRoles(m_edited.target, m_edited.features_columns);
}

void DataPanel::checkSplit() {
  m_splitErrorText.clear();
  if (!m_loaded) return;
  try {
    validation_split_at(m_data.size(), m_validationSplit);
  } catch (const InputError& e) {
    m_splitErrorText = QString::fromStdString(e.what());
  }
}

void DataPanel::showErrors() {
  for (auto it = m_tips.cbegin(); it != m_tips.cend(); ++it) it.key()->setToolTip(it.value());
  const bool csv = csvMode(), dataset = datasetMode(), folder = folderMode();
  const bool generator = !csv && !dataset && !folder;
  m_generatorError->setText(generator ? m_loadError : QString());
  m_generatorError->setVisible(generator && !m_loadError.isEmpty());
  m_datasetError->setText(dataset ? m_loadError : QString());
  m_datasetError->setVisible(dataset && !m_loadError.isEmpty());
  m_folderError->setText(folder ? m_loadError : QString());
  m_folderError->setVisible(folder && !m_loadError.isEmpty());
  m_csv->setError(csv ? m_loadError : QString(), m_loadPlace);
  m_previewGroup->setTitle(m_loaded && !m_loadError.isEmpty()
                               ? tr("Preview: the last data that loaded")
                               : tr("Preview"));
  const QHash<QString, QWidget*> fields = {{"data.samples", m_samples},
                                           {"data.noise", m_noise},
                                           {"data.seed", m_seed},
                                           {"data.features", m_features},
                                           {"data.classes", m_classes},
                                           {"data.subset", m_subset},
                                           {"data.directory", m_folderPath},
                                           {"data.image_size", m_imageHeight},
                                           {"data.label_mode", m_labelMode},
                                           {"data.validation_split", m_folderSplit}};
  if (QWidget* field = fields.value(m_loadPlace)) field->setToolTip(m_loadError);
  m_splitError->setText(m_splitErrorText);
  m_splitError->setVisible(!m_splitErrorText.isEmpty());
  if (!m_splitErrorText.isEmpty()) m_split->setToolTip(m_splitErrorText);
  // Features on very different scales, not standardized: a warning that teaches (the run is not
  // refused), over the rows fit() trains on.
  QString scale;
  // Not for images: their pixels share one scale (the border ones are always 0).
  if (m_loaded && !m_edited.standardize && !dataset && !folder && m_data.x.cols() > 1) {
    const Index train = m_splitErrorText.isEmpty() ? training_rows(m_data.size(), m_validationSplit)
                                                   : m_data.size();
    const FeatureSpread s = feature_spread(m_data.x.topRows(train));
    const auto name = [this](Index c) {
      return size_t(c) < m_data.feature_names.size()
                 ? QString::fromStdString(m_data.feature_names[size_t(c)])
                 : QStringLiteral("x%1").arg(c);
    };
    if (s.ratio() >= kScaleWarningRatio)
      scale =
          tr("⚠ %1 spreads %2 times as wide as %3 (standard deviations %4 and %5): one "
             "learning rate cannot suit both, so training crawls or diverges. Tick "
             "Standardize features.")
              .arg(name(s.widest), QLocale().toString(qRound64(s.ratio())), name(s.narrowest),
                   QString::number(s.widest_std, 'g', 3), QString::number(s.narrowest_std, 'g', 3));
  }
  m_scaleWarning->setText(scale);
  m_scaleWarning->setVisible(!scale.isEmpty());
}

QString DataPanel::errorText() const {
  QStringList errors;
  if (const QString range = rangeError(this); !range.isEmpty()) errors << range;
  if (!m_loadError.isEmpty()) errors << m_loadError;
  if (!m_splitErrorText.isEmpty()) errors << m_splitErrorText;
  return errors.join('\n');
}

int DataPanel::featureCount() const { return m_loaded ? static_cast<int>(m_data.x.cols()) : 0; }

std::vector<int64_t> DataPanel::sampleShape() const {
  return m_loaded ? m_data.shape_of_sample() : std::vector<int64_t>{};
}

int64_t DataPanel::sampleCount() const {
  return m_loaded ? static_cast<int64_t>(m_data.x.rows()) : 0;
}

void DataPanel::setValidationSplit(double fraction) {
  m_validationSplit = fraction;
  {
    const QSignalBlocker block(m_split);
    m_split->setValue(fraction);
  }
  checkSplit();
  showErrors();
  m_previewTimer->start();
}

void DataPanel::setBaseDir(const QString& dir) {
  if (dir == m_baseDir) return;
  // A first base folder resolves the relative paths; a later one means the experiment moved but
  // its data did not: relative paths are rewritten to name the same files.
  // The CSV files and the folders of images alike.
  std::string* const paths[] = {&m_spec.csv,       &m_edited.csv,       &m_lastCsv.csv,
                                &m_spec.directory, &m_edited.directory, &m_lastFolder};
  QStringList files;
  for (const std::string* p : paths) files << resolvedCsv(*p);
  const bool rebase = !m_baseDir.isEmpty();
  m_baseDir = dir;
  for (size_t i = 0; i < std::size(paths); ++i) {
    const bool relative = QDir::isRelativePath(QString::fromStdString(*paths[i]));
    if (rebase && relative && !paths[i]->empty())
      *paths[i] = pathForSpec(files[static_cast<int>(i)]).toStdString();
  }
  m_csv->setStartDir(dir);
  if (csvMode() && !m_edited.csv.empty()) {
    showCsvFile();
    reload();
  }
  if (folderMode() && !m_edited.directory.empty()) {
    const QSignalBlocker block(m_folderPath);
    m_folderPath->setText(QString::fromStdString(m_edited.directory));
    reload();
  }
}

void DataPanel::setReadOnly(bool readOnly) {
  m_readOnly = readOnly;
  updateFieldStates();
}

bool DataPanel::csvMode() const {
  return !datasetMode() && !folderMode() && (!m_edited.csv.empty() || m_edited.generator.empty());
}

void DataPanel::leaveFolder() {
  if (!m_folderMode) return;
  m_folderMode = false;
  m_edited.directory.clear();
  m_edited.image_validation_split = 0.0;  // fit's split is the one to use again
}

QString DataPanel::resolvedCsv(const std::string& path) const {
  const QString p = QString::fromStdString(path);
  if (QDir::isAbsolutePath(p) || m_baseDir.isEmpty()) return QFileInfo(p).absoluteFilePath();
  return QDir::cleanPath(QDir(m_baseDir).absoluteFilePath(p));
}

QString DataPanel::pathForSpec(const QString& absolutePath) const {
  if (m_baseDir.isEmpty()) return absolutePath;
  const QString relative = QDir(m_baseDir).relativeFilePath(absolutePath);
  if (QDir::isAbsolutePath(relative) || relative == ".." || relative.startsWith("../")) {
    return absolutePath;
  }
  return relative;
}

void DataPanel::refreshPreview() {
  if (!m_loaded) {
    m_scatter->clear();
    m_gallery->clear();
    return;
  }
  if (!m_spec.dataset.empty() || !m_spec.directory.empty()) {
    // Fashion-MNIST dark on light, as its garments read best; a folder's pictures as they are
    // (0 to 255, Keras's values before a Rescaling layer).
    const bool fashion = !m_spec.dataset.empty();
    m_gallery->setData(m_data, m_data.class_names, fashion && m_spec.scale ? 1.0f : 255.0f,
                       fashion);
    m_scatter->clear();
    return;
  }
  m_gallery->clear();
  Dataset shown = m_data;
  const Index n = shown.size();
  Index train = n;
  // The rows fit() trains on (trainingSamples: Keras's split point, without validation_split_at's
  // errors, which checkSplit has shown).
  if (m_splitErrorText.isEmpty()) train = training_rows(n, m_validationSplit);
  if (m_spec.standardize && train > 0) Standardizer::fit(shown.x.topRows(train)).apply(shown.x);
  m_scatter->setData(shown, m_classCount, train);
}

}  // namespace fitbench
