#include "core/data/idx_file.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/base/error.h"
#include "core/file_checks.h"

namespace fitbench {
namespace {

std::string type_name(uint8_t type) {
  switch (type) {
    case 0x08:
      return "unsigned byte";
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "short";
    case 0x0C:
      return "int";
    case 0x0D:
      return "float";
    case 0x0E:
      return "double";
    default:
      return "unknown";
  }
}

std::string hex_byte(uint8_t b) {
  static const char* digits = "0123456789abcdef";
  return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

}  // namespace

int64_t IdxArray::item_size() const {
  int64_t n = 1;
  for (size_t i = 1; i < dims.size(); ++i) n *= dims[i];
  return n;
}

std::vector<uint8_t> gunzip_if_gzip(std::span<const uint8_t> bytes, const std::string& place,
                                    int64_t max_bytes) {
  if (bytes.size() < 2 || bytes[0] != 0x1f || bytes[1] != 0x8b) return {bytes.begin(), bytes.end()};
  z_stream z{};
  // 16 + MAX_WBITS: a gzip header and trailer around the deflate stream.
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
    throw InputError(place, "cannot be inflated: zlib could not start");
  std::vector<uint8_t> out;
  // gzip's trailer ends with the inflated size modulo 2^32: room for it at once.
  const size_t n = bytes.size();
  if (n >= 18) {
    const uint32_t isize = uint32_t{bytes[n - 4]} | uint32_t{bytes[n - 3]} << 8 |
                           uint32_t{bytes[n - 2]} << 16 | uint32_t{bytes[n - 1]} << 24;
    out.reserve(static_cast<size_t>(std::min<int64_t>(isize, max_bytes)));
  }
  uint8_t block[1 << 16];
  z.next_in = const_cast<Bytef*>(bytes.data());
  size_t left = bytes.size();
  std::string problem;
  while (true) {
    if (z.avail_in == 0 && left > 0) {
      const uInt take = static_cast<uInt>(std::min<size_t>(left, 1u << 30));
      z.avail_in = take;
      left -= take;
    }
    z.next_out = block;
    z.avail_out = sizeof block;
    const int ret = inflate(&z, Z_NO_FLUSH);
    if (ret == Z_BUF_ERROR) {
      // No progress with room to write: every byte was read and the stream has not ended.
      problem = "the gzip stream ends early, after " + std::to_string(bytes.size()) +
                " bytes (a truncated download?)";
      break;
    }
    if (ret != Z_OK && ret != Z_STREAM_END) {
      problem = std::string("is not a valid gzip stream (zlib: ") +
                (z.msg ? z.msg : "error " + std::to_string(ret)) + ")";
      break;
    }
    const size_t produced = sizeof block - z.avail_out;
    if (static_cast<int64_t>(out.size() + produced) > max_bytes) {
      problem = "inflates to more than " + std::to_string(max_bytes) +
                " bytes, more than any IDX data set fitbench reads";
      break;
    }
    out.insert(out.end(), block, block + produced);
    if (ret == Z_STREAM_END) break;
  }
  const size_t unused = z.avail_in + left;
  inflateEnd(&z);
  if (!problem.empty()) throw InputError(place, problem);
  if (unused != 0)
    throw InputError(place, counted(static_cast<long long>(unused), "byte") +
                                (unused == 1 ? " follows" : " follow") +
                                " the end of the gzip stream; a gzip file of fitbench's data "
                                "sets holds one stream");
  return out;
}

IdxArray parse_idx(std::span<const uint8_t> bytes, const std::string& place) {
  if (bytes.size() < 4)
    throw InputError(place, "is " + counted(static_cast<long long>(bytes.size()), "byte") +
                                " long, shorter than an IDX header (4 bytes of magic number)");
  if (bytes[0] != 0 || bytes[1] != 0)
    throw InputError(place,
                     "byte 0: the file does not start with an IDX magic number (two zero "
                     "bytes, then the type and the number of dimensions); it starts " +
                         hex_byte(bytes[0]) + " " + hex_byte(bytes[1]));
  if (bytes[2] != 0x08)
    throw InputError(place, "byte 2: the elements are of type " + hex_byte(bytes[2]) + " (" +
                                type_name(bytes[2]) +
                                "); fitbench reads IDX files of unsigned bytes (0x08), as "
                                "MNIST and Fashion-MNIST are");
  const int rank = bytes[3];
  if (rank == 0) throw InputError(place, "byte 3: the file declares 0 dimensions");
  const size_t header = 4 + 4 * static_cast<size_t>(rank);
  if (bytes.size() < header)
    throw InputError(place, "the header declares " + counted(rank, "dimension") + " (" +
                                std::to_string(header) + " bytes of header) but the file is " +
                                counted(static_cast<long long>(bytes.size()), "byte") + " long");
  IdxArray a;
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) {
    const uint8_t* p = bytes.data() + 4 + 4 * d;
    const int64_t size =
        (int64_t{p[0]} << 24) | (int64_t{p[1]} << 16) | (int64_t{p[2]} << 8) | p[3];
    if (size == 0)
      throw InputError(place, "byte " + std::to_string(4 + 4 * d) + ": dimension " +
                                  std::to_string(d) + " has size 0; there is no data");
    if (total > kMaxIdxBytes / size)
      throw InputError(place, "byte " + std::to_string(4 + 4 * d) +
                                  ": the dimensions promise more than " +
                                  std::to_string(kMaxIdxBytes) + " elements");
    total *= size;
    a.dims.push_back(size);
  }
  const int64_t data = static_cast<int64_t>(bytes.size() - header);
  if (data != total)
    throw InputError(
        place, "the header promises " + std::to_string(total) + " elements (" +
                   [&] {
                     std::string s;
                     for (size_t i = 0; i < a.dims.size(); ++i)
                       s += (i ? " x " : "") + std::to_string(a.dims[i]);
                     return s;
                   }() +
                   ") but " + std::to_string(data) + " bytes follow it" +
                   (data < total ? " (a truncated file?)" : ""));
  a.values.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  return a;
}

IdxArray read_idx_file(const std::filesystem::path& file, const std::string& display) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) throw InputError(display, "does not exist");
  if (std::filesystem::is_directory(file, ec))
    throw InputError(display, "cannot be opened: it is a directory, not an IDX file");
  check_regular_file(file, display);
  errno = 0;
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw InputError(display, std::string("cannot be opened: ") +
                                  (err != 0 ? std::strerror(err) : "unknown reason"));
  }
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0) throw InputError(display, "cannot be read");
  if (size > kMaxIdxBytes)
    throw InputError(display, "is " + std::to_string(size) + " bytes, more than the " +
                                  std::to_string(kMaxIdxBytes) + " of any IDX file fitbench reads");
  std::vector<uint8_t> raw(static_cast<size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(raw.data()), size))
    throw InputError(display, "cannot be read");
  return parse_idx(gunzip_if_gzip(raw, display), display);
}

}  // namespace fitbench
