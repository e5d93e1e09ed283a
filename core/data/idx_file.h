// IDX files, the format of MNIST and Fashion-MNIST (http://yann.lecun.com/exdb/mnist/): a 4-byte
// magic (two zero bytes, the element type, the number of dimensions), each dimension's size as a
// big-endian 32-bit integer, then the elements in row-major order. fitbench reads the unsigned-byte
// type (0x08), the one those data sets use, plain or gzip-compressed (zlib inflates it). Free
// functions; no shared state.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace fitbench {

struct IdxArray {
  std::vector<int64_t> dims;    // e.g. {60000, 28, 28}
  std::vector<uint8_t> values;  // the product of dims, row-major

  int64_t items() const { return dims.empty() ? 0 : dims.front(); }
  // Elements per item (the product of the dimensions after the first; 1 for a 1-D array).
  int64_t item_size() const;
};

// The most bytes an IDX file may hold once inflated (a guard against gzip bombs): 1 GiB, 20 times
// Fashion-MNIST's training images.
inline constexpr int64_t kMaxIdxBytes = int64_t{1} << 30;

// `bytes` inflated when they begin with gzip's magic (1f 8b), else as they are. Throws
// InputError(place, ...) for a damaged or truncated stream, or one that inflates past max_bytes.
std::vector<uint8_t> gunzip_if_gzip(std::span<const uint8_t> bytes, const std::string& place,
                                    int64_t max_bytes = kMaxIdxBytes);

// An IDX file's contents. Throws InputError(place, ...) naming the byte offset for a wrong magic,
// an element type other than unsigned byte, 0 dimensions, a size of 0, data shorter or longer
// than the sizes promise.
IdxArray parse_idx(std::span<const uint8_t> bytes, const std::string& place);

// parse_idx of a file's bytes (gunzip_if_gzip first). Throws InputError(display, ...) for a file
// that is missing, unreadable or not a regular file, and as parse_idx does.
IdxArray read_idx_file(const std::filesystem::path& file, const std::string& display);

}  // namespace fitbench
