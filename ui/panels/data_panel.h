// The Data panel: where an experiment's data comes from (a generator picked from thumbnails, a
// CSV file with a preview of its rows and column roles, or Fashion-MNIST with a gallery of its
// images and a class histogram), the validation split, standardization, and a scatter preview of
// the loaded data. Edits a DataSpec and FitOptions::validation_split;
// owns its copy of the loaded data. Widget; UI thread only.
#pragma once

#include <QHash>
#include <QString>
#include <QWidget>

#include "core/data/data_spec.h"
#include "core/data/dataset.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QSpinBox;
class QTimer;
class QToolButton;

namespace fitbench {

class CsvPreview;
class DataScatter;
class ImageGallery;

class DataPanel : public QWidget {
  Q_OBJECT
 public:
  explicit DataPanel(QWidget* parent = nullptr);

  // Shows `spec` and loads its data; a load error is shown, not thrown. Emits nothing.
  void setSpec(const DataSpec& spec);
  // The settings as the user last had them valid: an edit that does not load (a bad CSV file,
  // more classes than samples) is shown as an error and leaves spec() as it was. After setSpec,
  // the given spec (even when it does not load, e.g. a CSV file that has moved).
  DataSpec spec() const { return m_spec; }
  // The experiment file's folder; a file chosen under it is given relative to it. The first one
  // resolves a relative DataSpec::csv (the data is reloaded); a later one (the experiment was
  // saved elsewhere) rewrites a relative path so that it names the same file. Emits nothing.
  void setBaseDir(const QString& dir);
  QString baseDir() const { return m_baseDir; }

  // FitOptions::validation_split: the last fraction of the rows, drawn hollow in the preview.
  double validationSplit() const { return m_validationSplit; }
  void setValidationSplit(double fraction);

  // While training runs: nothing is editable; the preview and tables still scroll.
  void setReadOnly(bool readOnly);
  // The load error and the validation split's error, "" when the data loads and splits.
  QString errorText() const;

  // What the data of spec() has (0 when it could not be loaded): feature columns, and classes of a
  // classification target, 0 for a real-valued (regression) target. Generators: 2 for the binary
  // sets, `classes` for blobs, 0 for plane and sine. CSV: the column count of one-hot targets, or
  // max + 1 (at least 2) for one integer target column with values 0 to 19.
  int featureCount() const;
  // One sample's shape ((28, 28) for an image, (features) for rows); empty until data loads.
  std::vector<int64_t> sampleShape() const;
  // The rows of the data as read (0 when not loaded): a CSV file's count is known only here.
  int64_t sampleCount() const;
  int classCount() const { return m_classCount; }

  // Switches to the CSV file at `path` (e.g. dropped on the window; a relative path is relative to
  // the base folder), guessing its delimiter and keeping the target column(s) when the new file
  // has them (else its last column). Returns true when it loads; otherwise the error is shown and
  // spec() keeps the previous settings. Emits changed(). Read-only: returns false, does nothing.
  bool loadCsvFile(const QString& path);

 signals:
  // After every edit by the user (spec(), errorText() and the counts are already up to date).
  void changed();

 private:
  void buildGeneratorList();
  QGroupBox* buildGeneratorGroup();
  QGroupBox* buildCsvGroup();
  QGroupBox* buildDatasetGroup();
  QGroupBox* buildFolderGroup();  // data_panel_folder.cpp
  void connectFolderSignals();
  void fillFolderWidgets();
  void updateFolderStates(bool editable);
  void browseFolder();
  void leaveFolder();  // another data set was picked: no directory, no folder split
  QGroupBox* buildOptionsGroup();
  QGroupBox* buildPreviewGroup();
  void connectSignals();

  void fillWidgets();
  void updateFieldStates();
  bool eventFilter(QObject* watched, QEvent* event) override;

  // User edits: each updates m_edited, reloads and emits changed().
  void onGeneratorPicked(int row);
  void onSeedEdited(const QString& text);
  void onCsvDelimiterEdited();
  void onCsvRolesEdited();
  void commitEdit();

  // Loads m_edited: on success it becomes m_spec and its data m_data. Returns false and shows the
  // error otherwise.
  bool reload();
  void showCsvFile();
  void checkSplit();
  void showErrors();
  void refreshPreview();
  QString resolvedCsv(const std::string& path) const;
  QString pathForSpec(const QString& absolutePath) const;
  bool csvMode() const;
  bool datasetMode() const { return !m_edited.dataset.empty(); }
  // A folder of images (data.directory), chosen or still to choose.
  bool folderMode() const { return m_folderMode; }
  // The folder's own validation subset validates (fit's validation split is then unused).
  bool folderValidates() const;

  QListWidget* m_generators = nullptr;
  QGroupBox* m_generatorGroup = nullptr;
  QFormLayout* m_generatorForm = nullptr;
  QSpinBox* m_samples = nullptr;
  QDoubleSpinBox* m_noise = nullptr;
  QLineEdit* m_seed = nullptr;
  QToolButton* m_newSeed = nullptr;
  QSpinBox* m_features = nullptr;
  QSpinBox* m_classes = nullptr;
  QLabel* m_generatorError = nullptr;
  QGroupBox* m_csvGroup = nullptr;
  CsvPreview* m_csv = nullptr;
  QGroupBox* m_datasetGroup = nullptr;  // Fashion-MNIST's settings
  QSpinBox* m_subset = nullptr;
  QCheckBox* m_scale = nullptr;
  QCheckBox* m_validateOnTest = nullptr;
  QLabel* m_datasetError = nullptr;
  QGroupBox* m_folderGroup = nullptr;  // a folder of images' settings
  QLineEdit* m_folderPath = nullptr;
  QToolButton* m_browseFolder = nullptr;
  QSpinBox* m_imageHeight = nullptr;
  QSpinBox* m_imageWidth = nullptr;
  QComboBox* m_colorMode = nullptr;
  QComboBox* m_labelMode = nullptr;
  QDoubleSpinBox* m_folderSplit = nullptr;
  QLineEdit* m_folderSeed = nullptr;
  QCheckBox* m_folderShuffle = nullptr;
  QCheckBox* m_skipUnreadable = nullptr;
  QLabel* m_folderError = nullptr;
  QDoubleSpinBox* m_split = nullptr;
  QCheckBox* m_standardize = nullptr;
  QLabel* m_splitError = nullptr;
  QLabel* m_scaleWarning = nullptr;  // features on very different scales, not standardized
  QGroupBox* m_previewGroup = nullptr;
  DataScatter* m_scatter = nullptr;
  ImageGallery* m_gallery = nullptr;  // the preview of an image data set
  QTimer* m_previewTimer = nullptr;

  QString m_baseDir;
  DataSpec m_spec;     // last valid (what spec() returns)
  DataSpec m_edited;   // what the widgets show
  DataSpec m_lastCsv;  // the CSV settings to come back to after trying a generator
  Dataset m_data;      // m_spec's data
  bool m_loaded = false;
  int m_classCount = 0;
  double m_validationSplit = 0.0;
  QString m_loadError;              // what loading m_edited said, "" when it loaded
  QString m_loadPlace;              // the error's place, to mark the field it concerns
  QHash<QWidget*, QString> m_tips;  // each field's tooltip when it has no error
  QString m_splitErrorText;
  bool m_folderMode = false;
  std::string m_lastFolder;  // the folder to come back to after trying another data set
  bool m_readOnly = false;
  bool m_filling = false;  // setSpec is filling the widgets: no edits, no changed()
};

}  // namespace fitbench
