// Keras 3's progress text: keras/src/utils/progbar.py (Progbar.update, _format_time,
// _estimate_step_duration) as keras/src/callbacks/progbar_logger.py drives it.
#include "core/training/progbar.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ostream>

#ifdef _WIN32
#include <io.h>
#define FITBENCH_ISATTY(f) _isatty(_fileno(f))
#else
#include <unistd.h>

#include "core/base/text.h"

#define FITBENCH_ISATTY(f) isatty(fileno(f))
#endif

namespace fitbench {

namespace {

constexpr int kBarWidth = 20;               // Progbar(width=20)
constexpr double kInterval = 0.05;          // Progbar(interval=0.05), seconds
constexpr const char* kBarChar = "\u2501";  // "━"
constexpr const char* kBold = "\x1b[1m";
constexpr const char* kReset = "\x1b[0m";
constexpr const char* kGreen = "\x1b[32m";
constexpr const char* kWhite = "\x1b[37m";

// Python's f"{v:.{decimals}f}" / f"{v:.{decimals}e}": glibc rounds as CPython does; only NaN
// differs (Python never prints "-nan").
std::string format_double(double v, int decimals, char conversion) {
  if (std::isnan(v)) return "nan";
  const char format[] = {'%', '.', '*', conversion, '\0'};
  char buffer[64];
  int n = std::snprintf(buffer, sizeof buffer, format, decimals, v);
  if (n >= static_cast<int>(sizeof buffer)) {
    std::string big(static_cast<size_t>(n) + 1, '\0');
    std::snprintf(big.data(), big.size(), format, decimals, v);
    big.resize(static_cast<size_t>(n));
    return big;
  }
  return std::string(buffer, static_cast<size_t>(std::max(n, 0)));
}

std::string fixed(double v, int decimals) { return format_double(v, decimals, 'f'); }

// {:.4f} above 1e-3 in magnitude, else {:.4e}. Keras's verbose=2 branch compares v itself.
std::string format_value(double v, bool compare_magnitude) {
  bool plain = compare_magnitude ? std::fabs(v) > 1e-3 : v > 1e-3;
  return format_double(v, 4, plain ? 'f' : 'e');
}

// Progbar._format_time: " 51ms/step", " 72us/step", " 2s/step".
std::string format_time(double time_per_unit) {
  std::string text = " ";
  if (time_per_unit >= 1 || time_per_unit == 0) {
    text += fixed(time_per_unit, 0);
    text += "s/step";
  } else if (time_per_unit >= 1e-3) {
    text += fixed(time_per_unit * 1000.0, 0);
    text += "ms/step";
  } else {
    text += fixed(time_per_unit * 1000000.0, 0);
    text += "us/step";
  }
  return text;
}

// Python's float // and % (CPython's float_divmod), for the ETA's fields.
std::pair<double, double> py_divmod(double vx, double wx) {
  double mod = std::fmod(vx, wx);
  double div = (vx - mod) / wx;
  if (mod != 0.0) {
    if ((wx < 0) != (mod < 0)) {
      mod += wx;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, wx);
  }
  double floordiv = 0.0;
  if (div != 0.0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, vx / wx);
  }
  return {floordiv, mod};
}

// Python's "%d" % float truncates toward zero.
long long py_int(double v) { return static_cast<long long>(v); }

std::string format_eta(double eta) {
  char buffer[64];
  if (eta > 3600) {
    auto [hours, rest] = py_divmod(eta, 3600);
    double minutes = py_divmod(rest, 60).first;
    double seconds = py_divmod(eta, 60).second;
    std::snprintf(buffer, sizeof buffer, "%lld:%02lld:%02lld", py_int(hours), py_int(minutes),
                  py_int(seconds));
  } else if (eta > 60) {
    auto [minutes, seconds] = py_divmod(eta, 60);
    std::snprintf(buffer, sizeof buffer, "%lld:%02lld", py_int(minutes), py_int(seconds));
  } else {
    std::snprintf(buffer, sizeof buffer, "%llds", py_int(eta));
  }
  return buffer;
}

// "%{numdigits}d/%d": the step right-aligned to the width of the target.
std::string format_count(int current, int target) {
  int digits = static_cast<int>(std::to_string(target).size());
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%*d/%d", digits, current, target);
  return buffer;
}

// Python's len() of the UTF-8 text: code points.
int code_points(const std::string& s) {
  int n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The order Keras shows epoch-end logs in (keras_key_group).
std::vector<std::pair<std::string, double>> keras_order(const Logs& logs) {
  std::vector<std::pair<std::string, double>> ordered(logs.begin(), logs.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return keras_key_group(a.first) < keras_key_group(b.first);
  });
  return ordered;
}

}  // namespace

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool stdout_is_terminal() { return FITBENCH_ISATTY(stdout) != 0; }

Progbar::Progbar(std::ostream& out, int verbose, bool interactive, Clock clock)
    : out_(out), verbose_(verbose), interactive_(interactive), clock_(std::move(clock)) {
  if (!clock_) clock_ = steady_seconds;
}

void Progbar::begin_epoch(int epoch, int epochs) {
  if (verbose_ == 0) return;
  start();
  if (epochs > 1) write("Epoch " + std::to_string(epoch + 1) + "/" + std::to_string(epochs) + "\n");
}

void Progbar::update(int step, int steps, const Logs& logs) {
  if (verbose_ != 1) return;  // ProgbarLogger updates the bar per batch only for verbose=1
  if (!started_) start();
  advance(step, steps, predicting_ ? Values{} : keras_order(logs), false);
}

void Progbar::end_epoch(int steps, const Logs& logs) {
  if (verbose_ == 0) return;
  if (!started_) start();
  advance(steps, steps, keras_order(logs), true);
}

void Progbar::begin_evaluate() {
  if (verbose_ == 0) return;
  start();
}

void Progbar::end_evaluate(int steps, const Logs& logs) { end_epoch(steps, logs); }

void Progbar::begin_predict() {
  if (verbose_ == 0) return;
  start();
  predicting_ = true;
}

void Progbar::end_predict(int steps) {
  if (verbose_ == 0) return;
  if (!started_) start();
  advance(steps, steps, Values{}, true);
}

void Progbar::start() {
  started_ = true;
  predicting_ = false;
  start_ = clock_();
  last_update_.reset();
  time_after_first_step_.reset();
  seen_so_far_ = 0;
  prev_total_width_ = 0;
  order_.clear();
  values_.clear();
}

double Progbar::estimate_step_duration(int current, double now) {
  if (current == 0) return 0.0;
  double time_per_unit = 0.0;
  if (time_after_first_step_ && current > 1) {
    time_per_unit = (now - *time_after_first_step_) / (current - 1);
  } else {
    time_per_unit = (now - start_) / current;
  }
  if (current == 1) time_after_first_step_ = now;
  return time_per_unit;
}

std::string Progbar::metrics_text(bool verbose2) const {
  std::string text;
  for (const std::string& key : order_) {
    const auto& [sum, count] = values_.at(key);
    double avg = sum / std::max(1.0, count);
    text += " - " + key + ": " + format_value(avg, !verbose2);
  }
  return text;
}

void Progbar::advance(int current, int target, const Values& values, bool finalize) {
  for (const auto& [key, value] : values) {
    if (std::find(order_.begin(), order_.end(), key) == order_.end()) order_.push_back(key);
    auto it = values_.find(key);
    if (finalize) {
      values_[key] = {value, 1.0};
    } else {
      double base = std::max(current - seen_so_far_, 1);
      if (it == values_.end()) {
        values_[key] = {value * base, base};
      } else {
        it->second.first += value * base;
        it->second.second += base;
      }
    }
  }
  seen_so_far_ = current;

  double now = clock_();
  double time_per_unit = estimate_step_duration(current, now);

  if (verbose_ == 1) {
    if (!finalize && last_update_ && now - *last_update_ < kInterval) return;
    if (!interactive_ && !finalize) {  // a log file gets the final line only
      last_update_ = now;
      return;
    }
    std::string count = format_count(current, target);
    int progress_width = static_cast<int>(kBarWidth * (static_cast<double>(current) / target));
    std::string done = repeat(kBarChar, progress_width);
    std::string todo = repeat(kBarChar, std::max(0, kBarWidth - progress_width));
    std::string when =
        finalize ? fixed(now - start_, 0) + "s" : format_eta(time_per_unit * (target - current));
    std::string tail = format_time(time_per_unit) + metrics_text(false);
    if (interactive_) {
      std::string message(static_cast<size_t>(prev_total_width_), '\b');
      message += '\r';
      message += kBold + count + kReset + " ";
      if (progress_width > 0) message += kGreen + done + kReset;
      message += kWhite + todo + kReset;
      message += std::string(" ") + kBold + when + kReset + tail;
      int total_width = code_points(count) + 1 + code_points(done) + code_points(todo) + 1 +
                        code_points(when) + code_points(tail);
      if (prev_total_width_ > total_width) message.append(prev_total_width_ - total_width, ' ');
      if (finalize) message += '\n';
      write(message);
      prev_total_width_ = total_width;
    } else {
      write(count + " " + done + todo + " " + when + tail + "\n");
    }
  } else if (verbose_ == 2 && finalize && target > 0) {
    write(format_count(current, target) + " - " + fixed(now - start_, 0) + "s -" +
          format_time(time_per_unit) + metrics_text(true) + "\n");
  }
  last_update_ = now;
}

void Progbar::write(const std::string& text) {
  out_ << text;
  out_.flush();
}

}  // namespace fitbench
