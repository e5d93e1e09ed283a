#include "ui/images/images_view.h"

#include <QComboBox>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "core/base/error.h"
#include "core/data/dataset.h"
#include "core/run/run_plan.h"
#include "ui/common/text_style.h"

namespace fitbench {

namespace {

const QColor kRight(0x1f, 0x77, 0xb4);  // the charts' train blue
const QColor kWrong(0xd6, 0x27, 0x28);
constexpr int kGap = 6;
constexpr int kImageZoom = 2;
constexpr int kBar = 60;  // the accuracy bar's length at 100%

QString percent(double f) { return QString::number(100.0 * f, 'f', 1) + QLatin1Char('%'); }

// A colour laid over white with opacity f (0-1).
QColor tint(const QColor& c, double f) {
  f = std::clamp(f, 0.0, 1.0);
  return QColor::fromRgbF(float(1.0 - f * (1.0 - c.redF())), float(1.0 - f * (1.0 - c.greenF())),
                          float(1.0 - f * (1.0 - c.blueF())));
}

QImage sampleImage(const PredictedPart& part, Index row) {
  const int h = part.height, w = part.width, c = part.channels;
  const uint8_t* px = part.pixels.data() + static_cast<size_t>(row) * size_t(h * w * c);
  QImage image(w, h, c == 3 ? QImage::Format_RGB888 : QImage::Format_Grayscale8);
  for (int i = 0; i < h; ++i) {
    uchar* line = image.scanLine(i);
    if (c == 3) {
      std::copy(px + i * w * 3, px + (i + 1) * w * 3, line);
    } else {
      // Dark on light, as the data panel's gallery and Keras's tutorial draw clothes.
      for (int j = 0; j < w; ++j) line[j] = static_cast<uchar>(255 - px[i * w + j]);
    }
  }
  return image;
}

// The part's images as bytes, each scaled from its least value to its greatest.
void keepPixels(const DataPart& data, PredictedPart& part) {
  const Shape& s = data.sample_shape;
  if (s.size() == 2 || (s.size() == 3 && (s[2] == 1 || s[2] == 3))) {
    part.height = static_cast<int>(s[0]);
    part.width = static_cast<int>(s[1]);
    part.channels = s.size() == 3 ? static_cast<int>(s[2]) : 1;
  } else {
    return;
  }
  const Index n = part.predictions.size(), cols = data.x.cols();
  part.pixels.resize(static_cast<size_t>(n * cols));
  for (Index r = 0; r < n; ++r) {
    const auto row = data.x.row(r);
    const float lo = row.minCoeff(), hi = row.maxCoeff();
    const float scale = hi > lo ? 255.0f / (hi - lo) : 0.0f;
    uint8_t* out = part.pixels.data() + static_cast<size_t>(r * cols);
    for (Index j = 0; j < cols; ++j)
      out[j] = static_cast<uint8_t>(std::lround((row(j) - lo) * scale));
  }
}

}  // namespace

// ---- ConfusionMatrixWidget --------------------------------------------------------------------

ConfusionMatrixWidget::ConfusionMatrixWidget(QWidget* parent) : QWidget(parent) {
  setFocusPolicy(Qt::StrongFocus);
  setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
}

void ConfusionMatrixWidget::setPredictions(const ClassPredictions* predictions,
                                           const QStringList& classNames) {
  m_p = predictions;
  m_names = classNames;
  m_true = m_predicted = -1;
  setFixedSize(sizeHint());  // a scroll area shows it whole
  update();
}

void ConfusionMatrixWidget::choose(int trueClass, int predictedClass) {
  const int n = m_p ? m_p->classes : 0;
  if (trueClass < 0 || predictedClass < 0 || trueClass >= n || predictedClass >= n)
    trueClass = predictedClass = -1;
  if (trueClass == m_true && predictedClass == m_predicted) return;
  m_true = trueClass;
  m_predicted = predictedClass;
  update();
  emit cellChosen(m_true, m_predicted);
}

int ConfusionMatrixWidget::labelWidth() const {
  int w = fontMetrics().horizontalAdvance(tr("True class"));
  for (int k = 0; k < m_names.size(); ++k)
    w = std::max(w,
                 fontMetrics().horizontalAdvance(QStringLiteral("%1  %2").arg(k).arg(m_names[k])));
  return w + 2 * kGap;
}

QSize ConfusionMatrixWidget::cellSize() const {
  const QFontMetrics fm = fontMetrics();
  return {std::max(fm.horizontalAdvance(QStringLiteral("00,000")),
                   fm.horizontalAdvance(QStringLiteral("100.0%"))) +
              10,
          2 * fm.height() + 6};
}

int ConfusionMatrixWidget::top() const { return 2 * fontMetrics().height() + 4; }

QRect ConfusionMatrixWidget::cellRect(int t, int p) const {
  const QSize c = cellSize();
  return {labelWidth() + p * c.width(), top() + t * c.height(), c.width(), c.height()};
}

QSize ConfusionMatrixWidget::sizeHint() const {
  const int n = m_p ? m_p->classes : 0;
  const QSize c = cellSize();
  const int accuracy = kGap + kBar + 4 + fontMetrics().horizontalAdvance(QStringLiteral(" 100.0%"));
  return {labelWidth() + n * c.width() + accuracy, top() + n * c.height() + 2};
}

void ConfusionMatrixWidget::paintEvent(QPaintEvent*) {
  if (!m_p) return;
  QPainter painter(this);
  const QFontMetrics fm = fontMetrics();
  const int n = m_p->classes;
  const QSize c = cellSize();
  const QColor text = palette().color(QPalette::WindowText);
  painter.setPen(text);
  // Headers: "Predicted class" over the columns (their numbers), the true classes by name.
  painter.drawText(QRect(labelWidth(), 0, n * c.width(), fm.height()), Qt::AlignCenter,
                   tr("Predicted class"));
  painter.drawText(QRect(0, fm.height() + 2, labelWidth(), fm.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, tr("True class"));
  for (int k = 0; k < n; ++k) {
    painter.drawText(QRect(labelWidth() + k * c.width(), fm.height() + 2, c.width(), fm.height()),
                     Qt::AlignCenter, QString::number(k));
    painter.drawText(
        QRect(0, top() + k * c.height(), labelWidth() - kGap, c.height()),
        Qt::AlignLeft | Qt::AlignVCenter,
        QStringLiteral("%1  %2").arg(k).arg(k < m_names.size() ? m_names[k] : QString()));
  }
  const int accuracyX = labelWidth() + n * c.width() + kGap;
  painter.drawText(QRect(accuracyX, fm.height() + 2, 200, fm.height()),
                   Qt::AlignLeft | Qt::AlignVCenter, tr("Accuracy"));
  for (int t = 0; t < n; ++t) {
    const int64_t total = m_p->row_total(t);
    for (int p = 0; p < n; ++p) {
      const QRect r = cellRect(t, p);
      const int64_t count = m_p->at(t, p);
      const double share = total ? double(count) / double(total) : 0.0;
      // The diagonal in blue by its share; a mistake in red, strong already at a fifth of a row.
      const QColor fill = t == p ? tint(kRight, share) : tint(kWrong, std::min(1.0, share * 4.0));
      painter.fillRect(r, count ? fill : palette().color(QPalette::Base));
      painter.setPen(palette().color(QPalette::Mid));
      painter.drawRect(r.adjusted(0, 0, -1, -1));
      const bool dark = fill.lightnessF() < 0.55;
      painter.setPen(count == 0 ? palette().color(QPalette::PlaceholderText)
                     : dark     ? QColor(Qt::white)
                                : text);
      const QRect upper(r.left(), r.top() + 3, r.width(), fm.height());
      const QRect lower(r.left(), r.top() + 3 + fm.height(), r.width(), fm.height());
      painter.drawText(upper, Qt::AlignCenter, groupedCount(count));
      if (count) painter.drawText(lower, Qt::AlignCenter, percent(share));
    }
    // The class's accuracy: a bar and its figure.
    const QRect row(accuracyX, top() + t * c.height(), kBar, c.height());
    const std::optional<double> a = m_p->class_accuracy(t);
    painter.fillRect(row.adjusted(0, 6, 0, -6), palette().color(QPalette::AlternateBase));
    if (a) {
      painter.fillRect(
          QRect(row.left(), row.top() + 6, int(std::lround(*a * kBar)), row.height() - 12), kRight);
      painter.setPen(text);
      painter.drawText(QRect(row.right() + 4, row.top(), 80, row.height()),
                       Qt::AlignLeft | Qt::AlignVCenter, percent(*a));
    }
  }
  if (m_true >= 0) {
    QPen pen(text, 3);
    painter.setPen(pen);
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(cellRect(m_true, m_predicted).adjusted(1, 1, -2, -2));
  }
  if (hasFocus() && m_true < 0) {
    painter.setPen(QPen(palette().color(QPalette::Highlight), 1, Qt::DashLine));
    painter.drawRect(QRect(cellRect(0, 0).topLeft(), cellRect(n - 1, n - 1).bottomRight()));
  }
}

void ConfusionMatrixWidget::mousePressEvent(QMouseEvent* event) {
  if (!m_p || event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  for (int t = 0; t < m_p->classes; ++t)
    for (int p = 0; p < m_p->classes; ++p)
      if (cellRect(t, p).contains(event->position().toPoint())) {
        // A click on the chosen cell lets it go.
        choose(t == m_true && p == m_predicted ? -1 : t, t == m_true && p == m_predicted ? -1 : p);
        return;
      }
}

void ConfusionMatrixWidget::keyPressEvent(QKeyEvent* event) {
  if (!m_p) return QWidget::keyPressEvent(event);
  const int n = m_p->classes;
  int t = m_true < 0 ? 0 : m_true, p = m_predicted < 0 ? 0 : m_predicted;
  const bool none = m_true < 0;
  switch (event->key()) {
    case Qt::Key_Left:
      p = none ? 0 : std::max(0, p - 1);
      break;
    case Qt::Key_Right:
      p = none ? 0 : std::min(n - 1, p + 1);
      break;
    case Qt::Key_Up:
      t = none ? 0 : std::max(0, t - 1);
      break;
    case Qt::Key_Down:
      t = none ? 0 : std::min(n - 1, t + 1);
      break;
    case Qt::Key_Escape:
      if (none) return QWidget::keyPressEvent(event);
      choose(-1, -1);
      return;
    default:
      return QWidget::keyPressEvent(event);
  }
  choose(t, p);
}

// ---- SampleGrid -------------------------------------------------------------------------------

// Its rows follow its width through its height, set again on each resize (which the scroll area
// around the view honours).
SampleGrid::SampleGrid(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
}

void SampleGrid::setSamples(const PredictedPart* part, std::vector<Index> samples,
                            const QStringList& classNames) {
  m_part = part;
  m_samples = std::move(samples);
  m_names = classNames;
  setFixedHeight(heightForWidth(width()));
  update();
}

QSize SampleGrid::tile() const {
  const int side = m_part && m_part->height > 0 ? std::max(m_part->height, m_part->width) : 28;
  int w = side * kImageZoom;
  for (const QString& n : m_names) w = std::max(w, fontMetrics().horizontalAdvance(n) + 4);
  return {w + kGap, side * kImageZoom + 2 * fontMetrics().height() + kGap + 2};
}

int SampleGrid::columns(int width) const { return std::max(1, width / tile().width()); }

int SampleGrid::heightForWidth(int width) const {
  const int n = shown();
  return n == 0 ? 0 : (n + columns(width) - 1) / columns(width) * tile().height();
}

QSize SampleGrid::sizeHint() const {
  const int width = 8 * tile().width();
  return {width, heightForWidth(width)};
}

int SampleGrid::at(QPoint position) const {
  const QSize t = tile();
  const int column = position.x() / t.width(), row = position.y() / t.height();
  if (column >= columns(width()) || position.x() < 0 || position.y() < 0) return -1;
  const int k = row * columns(width()) + column;
  return k < shown() ? k : -1;
}

void SampleGrid::paintEvent(QPaintEvent*) {
  if (!m_part) return;
  QPainter painter(this);
  const QFontMetrics fm = fontMetrics();
  const QSize t = tile();
  const int perRow = columns(width());
  const ClassPredictions& p = m_part->predictions;
  for (int k = 0; k < shown(); ++k) {
    const Index s = m_samples[static_cast<size_t>(k)];
    const auto i = static_cast<size_t>(s);
    const QPoint origin((k % perRow) * t.width(), (k / perRow) * t.height());
    const bool wrong = p.truth[i] != p.predicted[i];
    const int side = t.height() - 2 * fm.height() - kGap - 2;
    const QRect image(origin.x() + (t.width() - kGap - side) / 2, origin.y() + 1, side, side);
    if (m_part->height > 0) painter.drawImage(image, sampleImage(*m_part, s));
    painter.setPen(QPen(wrong ? kWrong : palette().color(QPalette::Mid), wrong ? 2 : 1));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(image.adjusted(-1, -1, 0, 0));
    const auto name = [this](int c) {
      return c < m_names.size() ? m_names[c] : QString::number(c);
    };
    QRect line(origin.x(), image.bottom() + 2, t.width() - kGap, fm.height());
    painter.setPen(wrong ? kWrong : palette().color(QPalette::WindowText));
    painter.drawText(line, Qt::AlignHCenter | Qt::AlignTop,
                     fm.elidedText(name(p.predicted[i]), Qt::ElideRight, line.width()));
    if (wrong) {
      line.translate(0, fm.height());
      painter.setPen(palette().color(QPalette::PlaceholderText));
      painter.drawText(line, Qt::AlignHCenter | Qt::AlignTop,
                       fm.elidedText(name(p.truth[i]), Qt::ElideRight, line.width()));
    }
  }
}

// Rows follow the width: the height the scroll area must give them is set again.
void SampleGrid::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  setFixedHeight(heightForWidth(width()));
}

bool SampleGrid::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip && m_part) {
    auto* help = static_cast<QHelpEvent*>(event);
    const int k = at(help->pos());
    if (k < 0) {
      QToolTip::hideText();
      return true;
    }
    const Index s = m_samples[static_cast<size_t>(k)];
    const ClassPredictions& p = m_part->predictions;
    const auto i = static_cast<size_t>(s);
    const auto name = [this](int c) {
      return c < m_names.size() ? m_names[c] : QString::number(c);
    };
    QToolTip::showText(help->globalPos(),
                       tr("Image %1: predicted %2 (%3), true class %4")
                           .arg(groupedCount(s))
                           .arg(name(p.predicted[i]))
                           .arg(percent(p.score[i]))
                           .arg(name(p.truth[i])),
                       this);
    return true;
  }
  return QWidget::event(event);
}

// ---- FilterStrip ------------------------------------------------------------------------------

FilterStrip::FilterStrip(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
}

void FilterStrip::setFilters(const FirstFilters& f) {
  m_images.clear();
  if (f.shape.size() == 4) {
    const auto kh = f.shape[0], kw = f.shape[1], in = f.shape[2], out = f.shape[3];
    for (int64_t o = 0; o < out; ++o) {
      std::vector<float> v(static_cast<size_t>(kh * kw), 0.0f);
      for (int64_t i = 0; i < kh * kw; ++i)
        for (int64_t c = 0; c < in; ++c)
          v[static_cast<size_t>(i)] +=
              f.values[static_cast<size_t>((i * in + c) * out + o)] / float(in);
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      const float scale = *hi > *lo ? 255.0f / (*hi - *lo) : 0.0f;
      QImage image(int(kw), int(kh), QImage::Format_Grayscale8);
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x)
          image.scanLine(int(y))[x] =
              static_cast<uchar>(std::lround((v[static_cast<size_t>(y * kw + x)] - *lo) * scale));
      m_images.push_back(image);
    }
  }
  setFixedHeight(heightForWidth(width()));
  update();
}

int FilterStrip::zoom() const {
  const int side = m_images.isEmpty() ? 3 : std::max(m_images[0].width(), m_images[0].height());
  return std::max(4, 40 / side);
}

int FilterStrip::heightForWidth(int width) const {
  if (m_images.isEmpty()) return 0;
  const int cell = m_images[0].width() * zoom() + kGap;
  const int perRow = std::max(1, width / cell);
  const int rows = (int(m_images.size()) + perRow - 1) / perRow;
  return rows * (m_images[0].height() * zoom() + kGap);
}

QSize FilterStrip::sizeHint() const {
  const int width = 16 * ((m_images.isEmpty() ? 3 : m_images[0].width()) * zoom() + kGap);
  return {width, heightForWidth(width)};
}

void FilterStrip::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  setFixedHeight(heightForWidth(width()));
}

void FilterStrip::paintEvent(QPaintEvent*) {
  if (m_images.isEmpty()) return;
  QPainter painter(this);
  const int w = m_images[0].width() * zoom(), h = m_images[0].height() * zoom();
  const int perRow = std::max(1, width() / (w + kGap));
  for (int k = 0; k < m_images.size(); ++k) {
    const QRect r((k % perRow) * (w + kGap), (k / perRow) * (h + kGap), w, h);
    painter.drawImage(r, m_images[k]);
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawRect(r.adjusted(0, 0, -1, -1));
  }
}

// ---- ImagesView -------------------------------------------------------------------------------

// What a prediction thread works on and hands back. Shared with the thread, which only writes
// `result` / `error` before it posts its end.
struct ImagesView::Job {
  ExperimentSpec spec;
  std::string baseDir;
  std::shared_ptr<const ModelFile> model;
  bool validation = true;
  std::atomic<bool> cancel{false};
  std::optional<PredictedPart> result;
  QStringList classNames;  // the data set's, when it names its classes
  QString error;

  void work() {
    try {
      ExperimentSpec resolved = spec;
      resolve_paths(resolved, baseDir);  // data.path from the experiment's folder, as the run
      const Dataset data = load_dataset(resolved.data, {});
      for (const std::string& name : data.class_names) classNames << toQString(name);
      const DataPart part = data_part(data, spec, *model, validation);
      PredictedPart out;
      out.predictions = predict_classes(*model, part, &cancel);
      if (cancel) return;
      keepPixels(part, out);
      result = std::move(out);
    } catch (const InputError& e) {
      error = toQString(e.what());
    } catch (const std::exception& e) {  // out of memory
      error = toQString(e.what());
    }
  }
};

ImagesView::ImagesView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  m_partChoice = new QComboBox;
  m_partChoice->setObjectName(QStringLiteral("imagesPart"));
  m_partChoice->addItem(tr("Validation images"));
  m_partChoice->addItem(tr("Training images"));
  top->addWidget(new QLabel(tr("Show")));
  top->addWidget(m_partChoice);
  top->addStretch(1);
  layout->addLayout(top);
  m_status = new QLabel;
  m_status->setWordWrap(true);
  m_status->setObjectName(QStringLiteral("imagesStatus"));
  layout->addWidget(m_status);

  // The matrix on the left, its images and the filters beside it (the view sits in the wide area
  // under the charts).
  m_content = new QWidget;
  auto* content = new QHBoxLayout(m_content);
  content->setContentsMargins(0, 0, 0, 0);
  m_matrix = new ConfusionMatrixWidget;
  m_matrix->setObjectName(QStringLiteral("confusionMatrix"));
  m_matrix->setToolTip(
      tr("Rows: the true class; columns: the class the model chose. Click a cell "
         "or move with the arrow keys to see its images; Escape shows all."));
  content->addWidget(m_matrix, 0, Qt::AlignTop);
  auto* side = new QVBoxLayout;
  m_gridCaption = new QLabel;
  m_gridCaption->setWordWrap(true);
  QFont bold = m_gridCaption->font();
  bold.setBold(true);
  m_gridCaption->setFont(bold);
  side->addWidget(m_gridCaption);
  m_grid = new SampleGrid;
  m_grid->setObjectName(QStringLiteral("predictionsGrid"));
  side->addWidget(m_grid);
  m_filtersCaption = new QLabel;
  m_filtersCaption->setWordWrap(true);
  m_filtersCaption->setFont(bold);
  side->addWidget(m_filtersCaption);
  m_filters = new FilterStrip;
  m_filters->setObjectName(QStringLiteral("firstFilters"));
  side->addWidget(m_filters);
  side->addStretch(1);
  content->addLayout(side, 1);
  layout->addWidget(m_content);
  layout->addStretch(1);

  connect(m_partChoice, &QComboBox::currentIndexChanged, this, [this] {
    showPart();
    predictIfShown();
  });
  connect(m_matrix, &ConfusionMatrixWidget::cellChosen, this, &ImagesView::showCell);
  clear();
}

ImagesView::~ImagesView() { stopJob(); }

void ImagesView::stopJob() {
  if (m_jobState) m_jobState->cancel = true;
  if (m_job.joinable()) m_job.join();
  m_jobState.reset();
  ++m_generation;  // a result already posted is for a job that no longer counts
}

int ImagesView::chosenPart() const { return m_partChoice->currentIndex() == 1 ? 1 : 0; }

void ImagesView::clear(const QString& why) {
  stopJob();
  m_spec.reset();
  m_model.reset();
  m_parts[0].reset();
  m_parts[1].reset();
  m_partError[0].clear();
  m_partError[1].clear();
  m_why = why.isEmpty()
              ? tr("Train a classifier of images (File > Examples, Fashion-MNIST) and this view "
                   "shows its confusion matrix, its predictions with the mistakes first, and its "
                   "first convolution's filters.")
              : why;
  showPart();
}

void ImagesView::setRun(const ExperimentSpec& spec, const QString& baseDir,
                        const ModelFile& model) {
  clear();
  if (spec.data.dataset.empty() && spec.data.directory.empty()) {
    clear(
        tr("The last run's data are not images: this view shows a classifier of images "
           "(data.dataset \"fashion_mnist\", or data.directory, a folder of images)."));
    return;
  }
  if (const std::string problem = classifier_problem(model); !problem.empty()) {
    clear(toQString(problem) + QLatin1Char('.'));
    return;
  }
  m_spec = spec;
  m_baseDir = baseDir;
  m_model = std::make_shared<const ModelFile>(model);
  m_names.clear();  // the data set's names arrive with the predictions
  const FirstFilters f = first_conv_filters(model);
  m_filters->setFilters(f);
  m_filtersCaption->setText(
      f.shape.empty()
          ? tr("The model has no Conv2D layer, so it has no filters to show.")
          : tr("The first Conv2D layer's filters (%1: %2 of %3 \u00d7 %4%5), each "
               "from its smallest weight (black) to its largest (white)")
                .arg(toQString(f.layer))
                .arg(f.shape[3])
                .arg(f.shape[0])
                .arg(f.shape[1])
                .arg(f.shape[2] > 1 ? tr(", the mean over its %1 input channels").arg(f.shape[2])
                                    : QString()));
  showPart();
  predictIfShown();
}

void ImagesView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  predictIfShown();
}

void ImagesView::predictIfShown() {
  const int k = chosenPart();
  if (!isVisible() || !m_model || m_parts[k] || !m_partError[k].isEmpty() || m_job.joinable())
    return;
  m_jobState = std::make_shared<Job>();
  m_jobState->spec = *m_spec;
  m_jobState->baseDir = m_baseDir.toStdString();
  m_jobState->model = m_model;
  m_jobState->validation = k == 0;
  const int generation = m_generation;
  m_job = std::thread([this, job = m_jobState, generation] {
    job->work();
    QMetaObject::invokeMethod(
        this, [this, generation] { finishJob(generation); }, Qt::QueuedConnection);
  });
  showPart();
}

void ImagesView::finishJob(int generation) {
  if (generation != m_generation || !m_jobState) return;
  m_job.join();
  const std::shared_ptr<Job> job = std::move(m_jobState);
  const int k = job->validation ? 0 : 1;
  if (!job->classNames.isEmpty()) m_names = job->classNames;
  if (job->result)
    m_parts[k] = std::move(job->result);
  else
    m_partError[k] = job->error.isEmpty() ? tr("The predictions stopped.") : job->error;
  showPart();
  emit partReady();
  predictIfShown();  // the other part was chosen meanwhile
}

const PredictedPart* ImagesView::part() const {
  const std::optional<PredictedPart>& p = m_parts[chosenPart()];
  return p ? &*p : nullptr;
}

QString ImagesView::status() const { return m_status->text(); }
QString ImagesView::gridCaption() const { return m_gridCaption->text(); }

void ImagesView::showPart() {
  const int k = chosenPart();
  const PredictedPart* p = part();
  m_partChoice->setEnabled(m_model != nullptr);
  m_content->setVisible(p != nullptr);
  m_matrix->setPredictions(p ? &p->predictions : nullptr, m_names);
  if (!m_model) {
    m_status->setText(m_why);
  } else if (!m_partError[k].isEmpty()) {
    m_status->setText(m_partError[k]);
  } else if (!p) {
    m_status->setText(k == 0 ? tr("Predicting the validation images\u2026")
                             : tr("Predicting the training images\u2026"));
  } else if (p->predictions.size() == 0) {
    m_status->setText(k == 0 ? tr("The run had no validation images: choose Training images, or "
                                  "give the run a validation split or the test images.")
                             : tr("The run had no training images."));
    m_content->setVisible(false);
  } else {
    const ClassPredictions& c = p->predictions;
    const QString which =
        k == 0 ? (m_spec && m_spec->data.validation_test ? tr("test images (the validation data)")
                                                         : tr("validation images"))
               : tr("training images");
    m_status->setText(tr("The trained model gets %1 of the %2 %3 right (%4 accuracy); %5 wrong.")
                          .arg(groupedCount(c.correct()))
                          .arg(groupedCount(c.size()))
                          .arg(which)
                          .arg(percent(c.accuracy()))
                          .arg(groupedCount(c.size() - c.correct())));
  }
  showCell(-1, -1);
}

void ImagesView::showCell(int trueClass, int predictedClass) {
  const PredictedPart* p = part();
  if (!p) {
    m_grid->setSamples(nullptr, {}, m_names);
    m_gridCaption->clear();
    return;
  }
  const ClassPredictions& c = p->predictions;
  const auto name = [this](int k) { return k < m_names.size() ? m_names[k] : QString::number(k); };
  std::vector<Index> samples;
  QString caption;
  if (trueClass < 0) {
    samples = c.mistakes_first();
    caption =
        tr("Predictions, the mistakes first (the most confident first): the predicted class, "
           "and under a mistake its true class");
  } else {
    samples = c.cell(trueClass, predictedClass);
    caption = trueClass == predictedClass ? tr("%1 %2 images predicted right")
                                                .arg(groupedCount(int64_t(samples.size())))
                                                .arg(name(trueClass))
                                          : tr("%1 %2 images predicted as %3")
                                                .arg(groupedCount(int64_t(samples.size())))
                                                .arg(name(trueClass))
                                                .arg(name(predictedClass));
    caption += tr(" (Escape shows all)");
  }
  if (int64_t(samples.size()) > SampleGrid::kMaxTiles)
    caption += tr("; the first %1 shown").arg(SampleGrid::kMaxTiles);
  m_gridCaption->setText(caption);
  m_grid->setSamples(p, std::move(samples), m_names);
}

}  // namespace fitbench
