// NumPy .npy files for the CLI: inputs are read from them and --save-outputs writes them.
//
// Reading accepts format versions 1.0, 2.0 and 3.0 and the dtypes f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1
// with byte order '<', '|', '=' (native, little-endian on every host we build for) or '>'.
// Choices (the brief leaves them to us):
//   - big-endian '>' data is byte-swapped into the engine's little-endian storage, so files written on
//     or for big-endian machines load with the same values;
//   - fortran_order True is accepted: the data is read as the reversed shape and transposed to row-major,
//     so the tensor's logical values are what numpy shows;
//   - bool bytes other than 0 and 1 are refused (the engine's Bool holds only 0 or 1);
//   - bytes after the data are refused (a file longer than its header says is not a clean .npy).
// A file that is not a valid .npy (truncated, bad magic, header length beyond the file, bad dict syntax,
// missing or unknown keys, data shorter than the shape needs, extents that overflow) is
// Error(Malformed) naming the file and the problem. Valid .npy files the engine cannot hold (complex,
// strings, objects, structured dtypes, rank > 8, more than 2^31-1 elements) are Error(Unsupported).
//
// Writing always produces version 1.0, little-endian, C order; the header is padded so the data starts
// at a multiple of 64 bytes, as numpy does. BF16 has no numpy dtype and is Error(Unsupported).
#pragma once
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "onemodel/tensor.h"

namespace onemodel::cli {

// Parses .npy bytes; `source` names the file in errors.
Tensor parse_npy(std::span<const std::byte> bytes, const std::string& source);
// Reads a file (Error(Io) if it cannot be read).
Tensor read_npy(const std::filesystem::path& path);

// Serialises a tensor (any strides) as .npy version 1.0.
std::vector<std::byte> npy_bytes(const Tensor& t);
void write_npy(const std::filesystem::path& path, const Tensor& t);

}  // namespace onemodel::cli
