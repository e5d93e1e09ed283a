// The Data panel's folder of images (data.directory): the settings of
// keras.utils.image_dataset_from_directory, each edit reloading the folder.

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpressionValidator>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolButton>
#include <limits>

#include "ui/common/field_error.h"
#include "ui/common/number_spin_box.h"
#include "ui/panels/data_panel.h"

namespace fitbench {

bool DataPanel::folderValidates() const { return m_folderMode && m_edited.has_own_validation(); }

QGroupBox* DataPanel::buildFolderGroup() {
  m_folderGroup = new QGroupBox(tr("Folder of images"));
  m_folderPath = new QLineEdit;
  m_folderPath->setObjectName("imageFolder");
  m_folderPath->setPlaceholderText(tr("a folder with one subfolder per class"));
  m_tips[m_folderPath] =
      tr("One subfolder per class, named after it (cats/, dogs/, ...), holding PNG, JPEG, BMP or "
         "GIF files, as keras.utils.image_dataset_from_directory reads them. The classes are the "
         "subfolders in alphanumeric order.");
  m_browseFolder = new QToolButton;
  m_browseFolder->setObjectName("browseFolder");
  m_browseFolder->setText(tr("Browse…"));
  auto* pathRow = new QHBoxLayout;
  pathRow->setContentsMargins(0, 0, 0, 0);
  pathRow->addWidget(m_folderPath, 1);
  pathRow->addWidget(m_browseFolder);

  const auto pixels = [this](const char* name) {
    auto* box = new QSpinBox;
    box->setObjectName(name);
    box->setRange(1, 16384);
    box->setSuffix(tr(" px"));
    box->setKeyboardTracking(false);  // one load per value, not per digit typed
    return box;
  };
  m_imageHeight = pixels("imageHeight");
  m_imageWidth = pixels("imageWidth");
  m_tips[m_imageHeight] = m_tips[m_imageWidth] =
      tr("image_size: every image is resized to this height and width (bilinear, as "
         "tf.image.resize) when it is read.");
  auto* sizeRow = new QHBoxLayout;
  sizeRow->setContentsMargins(0, 0, 0, 0);
  sizeRow->addWidget(m_imageHeight);
  sizeRow->addWidget(new QLabel(QStringLiteral("\u00d7")));
  sizeRow->addWidget(m_imageWidth);
  sizeRow->addStretch(1);

  m_colorMode = new QComboBox;
  m_colorMode->setObjectName("colorMode");
  m_colorMode->addItem(tr("Grayscale (1 channel)"), QStringLiteral("grayscale"));
  m_colorMode->addItem(tr("RGB (3 channels)"), QStringLiteral("rgb"));
  m_colorMode->addItem(tr("RGBA (4 channels)"), QStringLiteral("rgba"));
  m_tips[m_colorMode] = tr("color_mode: the channels each image is read with.");
  m_labelMode = new QComboBox;
  m_labelMode->setObjectName("labelMode");
  m_labelMode->addItem(tr("Class index (int)"), QStringLiteral("int"));
  m_labelMode->addItem(tr("One-hot (categorical)"), QStringLiteral("categorical"));
  m_labelMode->addItem(tr("0 or 1 (binary, 2 classes)"), QStringLiteral("binary"));
  m_tips[m_labelMode] =
      tr("label_mode: class indices for sparse_categorical_crossentropy, one-hot rows for "
         "categorical_crossentropy, 0/1 for binary_crossentropy.");

  m_folderSplit = new NumberSpinBox;
  m_folderSplit->setObjectName("folderValidationSplit");
  // data.validation_split's check (core) says what it takes.
  m_folderSplit->setRange(std::numeric_limits<double>::lowest(),
                          std::numeric_limits<double>::max());
  m_folderSplit->setSingleStep(0.05);
  m_tips[m_folderSplit] =
      tr("validation_split with subset \"both\": after the shuffle, the last fraction of the "
         "files validates (the val_ curves are theirs). Fit's own validation split is then "
         "unused.");
  m_folderSeed = new QLineEdit;
  m_folderSeed->setObjectName("folderSeed");
  m_folderSeed->setValidator(new QRegularExpressionValidator(
      QRegularExpression(QStringLiteral("[0-9]{0,10}")), m_folderSeed));
  m_tips[m_folderSeed] =
      tr("seed: the files are shuffled with NumPy's RandomState(seed) before the split, as Keras "
         "does; the same seed gives the same split.");
  m_folderShuffle = new QCheckBox(tr("Shuffle the files before the split"));
  m_folderShuffle->setObjectName("folderShuffle");
  m_skipUnreadable = new QCheckBox(tr("Skip files that cannot be read"));
  m_skipUnreadable->setObjectName("skipUnreadable");
  m_tips[m_skipUnreadable] =
      tr("Left out and listed in the log; otherwise a file that cannot be read stops the load "
         "and is named here.");
  m_folderError = makeFieldErrorLabel();
  m_folderError->setObjectName("folderError");

  auto* form = new QFormLayout(m_folderGroup);
  form->addRow(tr("Folder"), pathRow);
  form->addRow(tr("Image size"), sizeRow);
  form->addRow(tr("Color mode"), m_colorMode);
  form->addRow(tr("Labels"), m_labelMode);
  form->addRow(tr("Validation subset"), m_folderSplit);
  form->addRow(tr("Seed"), m_folderSeed);
  form->addRow(m_folderShuffle);
  form->addRow(m_skipUnreadable);
  form->addRow(m_folderError);
  return m_folderGroup;
}

void DataPanel::connectFolderSignals() {
  const auto edit = [this](auto apply) {
    return [this, apply](auto value) {
      if (m_filling) return;
      apply(value);
      updateFieldStates();
      commitEdit();
    };
  };
  connect(m_folderPath, &QLineEdit::editingFinished, this, [this] {
    if (m_filling || m_readOnly) return;
    const std::string typed = m_folderPath->text().trimmed().toStdString();
    if (typed == m_edited.directory) return;
    m_edited.directory = typed;
    commitEdit();
  });
  connect(m_browseFolder, &QToolButton::clicked, this, &DataPanel::browseFolder);
  connect(m_imageHeight, &QSpinBox::valueChanged, this,
          edit([this](int v) { m_edited.image_height = v; }));
  connect(m_imageWidth, &QSpinBox::valueChanged, this,
          edit([this](int v) { m_edited.image_width = v; }));
  connect(m_colorMode, &QComboBox::currentIndexChanged, this, edit([this](int) {
            m_edited.color_mode = m_colorMode->currentData().toString().toStdString();
          }));
  connect(m_labelMode, &QComboBox::currentIndexChanged, this, edit([this](int) {
            m_edited.label_mode = m_labelMode->currentData().toString().toStdString();
          }));
  connect(m_folderSplit, &QDoubleSpinBox::valueChanged, this, edit([this](double v) {
            m_edited.image_validation_split = v;
            if (v > 0.0) {
              m_edited.image_subset = "both";
              // The folder's subset validates: fit.validation_split must be 0 (read_experiment).
              setValidationSplit(0.0);
            }
          }));
  connect(m_folderSeed, &QLineEdit::textEdited, this, edit([this](const QString& text) {
            bool ok = false;
            const qulonglong seed = text.toULongLong(&ok);
            if (ok && seed <= 0xffffffffULL) m_edited.seed = seed;
          }));
  connect(m_folderShuffle, &QCheckBox::toggled, this,
          edit([this](bool on) { m_edited.image_shuffle = on; }));
  connect(m_skipUnreadable, &QCheckBox::toggled, this,
          edit([this](bool on) { m_edited.skip_unreadable = on; }));
}

void DataPanel::browseFolder() {
  if (m_readOnly) return;
  const QString start = m_edited.directory.empty() ? m_baseDir : resolvedCsv(m_edited.directory);
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Folder of images"), start);
  if (dir.isEmpty()) return;
  m_edited.directory = pathForSpec(QDir::cleanPath(dir)).toStdString();
  {
    const QSignalBlocker block(m_folderPath);
    m_folderPath->setText(QString::fromStdString(m_edited.directory));
  }
  commitEdit();
}

void DataPanel::fillFolderWidgets() {
  m_folderPath->setText(QString::fromStdString(m_edited.directory));
  m_imageHeight->setValue(static_cast<int>(std::clamp<int64_t>(m_edited.image_height, 1, 16384)));
  m_imageWidth->setValue(static_cast<int>(std::clamp<int64_t>(m_edited.image_width, 1, 16384)));
  m_colorMode->setCurrentIndex(
      std::max(0, m_colorMode->findData(QString::fromStdString(m_edited.color_mode))));
  m_labelMode->setCurrentIndex(
      std::max(0, m_labelMode->findData(QString::fromStdString(m_edited.label_mode))));
  m_folderSplit->setValue(m_edited.image_validation_split);
  m_folderSeed->setText(QString::number(m_edited.seed));
  m_folderShuffle->setChecked(m_edited.image_shuffle);
  m_skipUnreadable->setChecked(m_edited.skip_unreadable);
}

void DataPanel::updateFolderStates(bool editable) {
  for (QWidget* w : std::initializer_list<QWidget*>{m_browseFolder, m_imageHeight, m_imageWidth,
                                                    m_colorMode, m_labelMode, m_folderSplit,
                                                    m_folderShuffle, m_skipUnreadable})
    w->setEnabled(editable);
  m_folderPath->setReadOnly(!editable);
  m_folderSeed->setReadOnly(!editable);
}

}  // namespace fitbench
