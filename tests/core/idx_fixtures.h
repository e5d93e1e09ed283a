// IDX files for tests (core/data/idx_file.h): arrays in the format, gzip-compressed with zlib,
// and Fashion-MNIST's four files with a few made-up images in a folder.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>

namespace fitbench::test {

using Bytes = std::vector<uint8_t>;

inline Bytes idx(std::vector<uint32_t> dims, const Bytes& values, uint8_t type = 0x08) {
  Bytes b = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<uint8_t>(d >> shift));
  b.insert(b.end(), values.begin(), values.end());
  return b;
}

inline Bytes gzip(const Bytes& raw) {
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  Bytes out(deflateBound(&z, raw.size()) + 32);
  z.next_in = const_cast<Bytef*>(raw.data());
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

inline void write(const std::filesystem::path& file, const Bytes& bytes) {
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

// n images of 28 x 28 whose pixel j of image i is (i * 7 + j) % 256; n labels i % 10.
inline Bytes images(uint32_t n) {
  Bytes v(static_cast<size_t>(n) * 784);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < 784; ++j) v[i * 784 + j] = static_cast<uint8_t>((i * 7 + j) % 256);
  return idx({n, 28, 28}, v);
}
inline Bytes labels(uint32_t n) {
  Bytes v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i % 10);
  return idx({n}, v);
}

// Fashion-MNIST's four files in `dir`: `train` training and `test` test images and labels.
inline void write_fashion_mnist(const std::filesystem::path& dir, uint32_t train, uint32_t test) {
  write(dir / "train-images-idx3-ubyte.gz", gzip(images(train)));
  write(dir / "train-labels-idx1-ubyte.gz", gzip(labels(train)));
  write(dir / "t10k-images-idx3-ubyte.gz", gzip(images(test)));
  write(dir / "t10k-labels-idx1-ubyte.gz", gzip(labels(test)));
}

}  // namespace fitbench::test
