// .npy reading and writing (cli/npy.h). The well-formed files below were written by numpy 1.24.2 with
// /usr/bin/python3 (np.save or numpy.lib.format.write_array into a BytesIO, the call is in the comment
// above each constant) and embedded as string literals; hostile files are built in code.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/npy.h"

namespace onemodel::cli {
namespace {

using namespace std::string_literals;

std::string spaces(size_t n) { return std::string(n, ' '); }

// np.save(np.arange(6, dtype='<f4').reshape(2,3) * 1.5)
const std::string kF4_2x3 =
    "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"s + spaces(58) +
    "\012\000\000\000\000\000\000\300\077\000\000@@\000\000\220@\000\000\300@\000\000\360@"s;  // 152 bytes
// np.save(np.array(3.25))
const std::string kF8Scalar = "\223NUMPY\001\000v\000{'descr': '<f8', 'fortran_order': False, 'shape': (), }"s +
                              spaces(62) + "\012\000\000\000\000\000\000\012@"s;  // 136 bytes
// np.save(np.array([-1, 0, 2**40], dtype='<i8'))
const std::string kI8_3 =
    "\223NUMPY\001\000v\000{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }"s + spaces(60) +
    "\012\377\377\377\377\377\377\377\377\000\000\000\000\000\000\000\000\000\000\000\000\000\001\000\000"s;  // 152
                                                                                                              // bytes
// np.save(np.array([[0, 255], [7, 8]], dtype='u1'))
const std::string kU1_2x2 = "\223NUMPY\001\000v\000{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }"s +
                            spaces(58) + "\012\000\377\007\010"s;  // 132 bytes
// np.save(np.array([True, False, False, True]))
const std::string kB1_4 = "\223NUMPY\001\000v\000{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }"s +
                          spaces(60) + "\012\001\000\000\001"s;  // 132 bytes
// np.save(np.array([1.0, -2.5], dtype='<f2'))
const std::string kF2_2 = "\223NUMPY\001\000v\000{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }"s +
                          spaces(60) + "\012\000<\000\301"s;  // 132 bytes
// np.save(np.array([-128, 127], dtype='i1'))
const std::string kI1_2 = "\223NUMPY\001\000v\000{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }"s +
                          spaces(60) + "\012\200\177"s;  // 130 bytes
// np.save(np.array([-300, 300], dtype='<i2'))
const std::string kI2_2 = "\223NUMPY\001\000v\000{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }"s +
                          spaces(60) + "\012\324\376,\001"s;  // 132 bytes
// np.save(np.array([-70000, 70000], dtype='<i4'))
const std::string kI4_2 = "\223NUMPY\001\000v\000{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }"s +
                          spaces(60) + "\012\220\356\376\377p\021\001\000"s;  // 136 bytes
// np.save(np.array([1, 65535], dtype='<u2'))
const std::string kU2_2 = "\223NUMPY\001\000v\000{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }"s +
                          spaces(60) + "\012\001\000\377\377"s;  // 132 bytes
// np.save(np.array([1, 4000000000], dtype='<u4'))
const std::string kU4_2 = "\223NUMPY\001\000v\000{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }"s +
                          spaces(60) + "\012\001\000\000\000\000(k\356"s;  // 136 bytes
// np.save(np.array([1, 2**63 + 5], dtype='<u8'))
const std::string kU8_2 = "\223NUMPY\001\000v\000{'descr': '<u8', 'fortran_order': False, 'shape': (2,), }"s +
                          spaces(60) +
                          "\012\001\000\000\000\000\000\000\000\005\000\000\000\000\000\000\200"s;  // 144 bytes
// np.save(np.array([1, -2, 65536], dtype='>i4'))
const std::string kI4BigEndian_3 = "\223NUMPY\001\000v\000{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }"s +
                                   spaces(60) + "\012\000\000\000\001\377\377\377\376\000\001\000\000"s;  // 140 bytes
// np.save(np.array([1.5, -0.25], dtype='>f8'))
const std::string kF8BigEndian_2 =
    "\223NUMPY\001\000v\000{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }"s + spaces(60) +
    "\012\077\370\000\000\000\000\000\000\277\320\000\000\000\000\000\000"s;  // 144 bytes
// np.save(np.asfortranarray(np.arange(6, dtype='<f4').reshape(2,3)))
const std::string kF4Fortran_2x3 =
    "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }"s + spaces(59) +
    "\012\000\000\000\000\000\000@@\000\000\200\077\000\000\200@\000\000\000@\000\000\240@"s;  // 152 bytes
// np.save(np.asfortranarray(np.arange(12, dtype='<i4').reshape(2,3,2)))
const std::string kI4Fortran_2x3x2 =
    "\223NUMPY\001\000v\000{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 2), }"s + spaces(56) +
    "\012\000\000\000\000\006\000\000\000\002\000\000\000\010\000\000\000\004\000\000\000\012\000\000\000\001\000\000\000\007\000\000\000\003\000\000\000\011\000\000\000\005\000\000\000\013\000\000\000"s;  // 176 bytes
// format.write_array(np.array([1, 2, 3], dtype='<f4'), version=(2, 0))
const std::string kF4V2_3 = "\223NUMPY\002\000t\000\000\000{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"s +
                            spaces(58) + "\012\000\000\200\077\000\000\000@\000\000@@"s;  // 140 bytes
// format.write_array(np.array([[7], [9]], dtype='<i8'), version=(3, 0))
const std::string kI8V3_2x1 =
    "\223NUMPY\003\000t\000\000\000{'descr': '<i8', 'fortran_order': False, 'shape': (2, 1), }"s + spaces(56) +
    "\012\007\000\000\000\000\000\000\000\011\000\000\000\000\000\000\000"s;  // 144 bytes
// np.save(np.zeros((0, 3), dtype='<f4'))
const std::string kF4Empty_0x3 = "\223NUMPY\001\000v\000{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }"s +
                                 spaces(58) + "\012"s;  // 128 bytes
// np.save(np.array([1+2j], dtype='<c8'))
const std::string kC8_1 = "\223NUMPY\001\000v\000{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }"s +
                          spaces(60) + "\012\000\000\200\077\000\000\000@"s;  // 136 bytes

Tensor parse(const std::string& s, const std::string& name = "test.npy") {
  return parse_npy(std::span<const std::byte>(reinterpret_cast<const std::byte*>(s.data()), s.size()), name);
}

template <class T>
std::vector<T> vals(const Tensor& t) {
  auto d = t.data<T>();
  return {d.begin(), d.end()};
}

// A .npy file from header text and data bytes, laid out by hand (magic, version, little-endian length).
std::string make_npy(const std::string& header, const std::string& data, int major = 1) {
  std::string s = "\x93NUMPY"s;
  s += static_cast<char>(major);
  s += '\0';
  size_t n = header.size();
  s += static_cast<char>(n & 0xff);
  s += static_cast<char>((n >> 8) & 0xff);
  if (major > 1) {
    s += static_cast<char>((n >> 16) & 0xff);
    s += static_cast<char>((n >> 24) & 0xff);
  }
  return s + header + data;
}

// Expects Error(kind) whose text names the file and contains `fragment`.
void expect_error(const std::string& bytes, ErrorKind kind, const std::string& fragment) {
  try {
    parse(bytes, "hostile.npy");
    ADD_FAILURE() << "no error; expected " << fragment;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find("hostile.npy"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(NpyReadTest, FloatTypes) {
  ASSERT_EQ(kF4_2x3.size(), 152u);
  Tensor a = parse(kF4_2x3);
  EXPECT_EQ(a.dtype(), DType::F32);
  EXPECT_EQ(a.shape(), Shape({2, 3}));
  EXPECT_EQ(vals<float>(a), (std::vector<float>{0, 1.5f, 3, 4.5f, 6, 7.5f}));
  Tensor s = parse(kF8Scalar);
  EXPECT_EQ(s.dtype(), DType::F64);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(vals<double>(s), std::vector<double>{3.25});
  Tensor h = parse(kF2_2);
  EXPECT_EQ(h.dtype(), DType::F16);
  EXPECT_EQ(h.shape(), Shape({2}));
  std::vector<uint16_t> bits(2);
  std::memcpy(bits.data(), h.raw(), 4);
  EXPECT_EQ(bits, (std::vector<uint16_t>{0x3c00, 0xc100}));  // binary16 of 1.0 and -2.5
  Tensor e = parse(kF4Empty_0x3);
  EXPECT_EQ(e.shape(), Shape({0, 3}));
}

TEST(NpyReadTest, IntegerAndBoolTypes) {
  EXPECT_EQ(vals<int64_t>(parse(kI8_3)), (std::vector<int64_t>{-1, 0, int64_t{1} << 40}));
  Tensor u = parse(kU1_2x2);
  EXPECT_EQ(u.shape(), Shape({2, 2}));
  EXPECT_EQ(vals<uint8_t>(u), (std::vector<uint8_t>{0, 255, 7, 8}));
  Tensor b = parse(kB1_4);
  EXPECT_EQ(b.dtype(), DType::Bool);
  EXPECT_EQ(vals<bool>(b), (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(vals<int8_t>(parse(kI1_2)), (std::vector<int8_t>{-128, 127}));
  EXPECT_EQ(vals<int16_t>(parse(kI2_2)), (std::vector<int16_t>{-300, 300}));
  EXPECT_EQ(vals<int32_t>(parse(kI4_2)), (std::vector<int32_t>{-70000, 70000}));
  EXPECT_EQ(vals<uint16_t>(parse(kU2_2)), (std::vector<uint16_t>{1, 65535}));
  EXPECT_EQ(vals<uint32_t>(parse(kU4_2)), (std::vector<uint32_t>{1, 4000000000u}));
  EXPECT_EQ(vals<uint64_t>(parse(kU8_2)), (std::vector<uint64_t>{1, (uint64_t{1} << 63) + 5}));
}

TEST(NpyReadTest, ByteOrders) {
  // Big-endian data is byte-swapped.
  EXPECT_EQ(vals<int32_t>(parse(kI4BigEndian_3)), (std::vector<int32_t>{1, -2, 65536}));
  EXPECT_EQ(vals<double>(parse(kF8BigEndian_2)), (std::vector<double>{1.5, -0.25}));
  // '=' (native) is little-endian here; numpy never writes it, so patch numpy's '<i2' file.
  std::string native = kI2_2;
  size_t at = native.find("'<i2'");
  ASSERT_NE(at, std::string::npos);
  native[at + 1] = '=';
  EXPECT_EQ(vals<int16_t>(parse(native)), (std::vector<int16_t>{-300, 300}));
  // '|' for a one-byte type is what numpy writes (kU1_2x2 above); '|' on a multi-byte type reads as little.
  std::string pipe = kI2_2;
  pipe[at + 1] = '|';
  EXPECT_EQ(vals<int16_t>(parse(pipe)), (std::vector<int16_t>{-300, 300}));
}

TEST(NpyReadTest, FortranOrderIsTransposedToRowMajor) {
  Tensor f = parse(kF4Fortran_2x3);
  EXPECT_EQ(f.shape(), Shape({2, 3}));
  EXPECT_TRUE(f.is_contiguous());
  EXPECT_EQ(vals<float>(f), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  Tensor g = parse(kI4Fortran_2x3x2);
  EXPECT_EQ(g.shape(), Shape({2, 3, 2}));
  std::vector<int32_t> want(12);
  for (int i = 0; i < 12; ++i) want[static_cast<size_t>(i)] = i;
  EXPECT_EQ(vals<int32_t>(g), want);
}

TEST(NpyReadTest, Versions2And3) {
  Tensor a = parse(kF4V2_3);
  EXPECT_EQ(vals<float>(a), (std::vector<float>{1, 2, 3}));
  Tensor b = parse(kI8V3_2x1);
  EXPECT_EQ(b.shape(), Shape({2, 1}));
  EXPECT_EQ(vals<int64_t>(b), (std::vector<int64_t>{7, 9}));
}

TEST(NpyReadTest, HostileFilesAreMalformed) {
  const std::string four_f4 = std::string(16, '\0');
  const std::string good_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n";
  EXPECT_NO_THROW(parse(make_npy(good_header, four_f4)));
  expect_error(kF4_2x3.substr(0, 5), ErrorKind::Malformed, "truncated");
  expect_error("", ErrorKind::Malformed, "truncated");
  expect_error(kF4_2x3.substr(0, 9), ErrorKind::Malformed, "truncated");
  std::string magic = kF4_2x3;
  magic[1] = 'M';
  expect_error(magic, ErrorKind::Malformed, "magic");
  // Header length field larger than the file.
  std::string longhdr = kF4_2x3;
  longhdr[8] = '\xff';
  longhdr[9] = '\x7f';
  expect_error(longhdr, ErrorKind::Malformed, "beyond the end");
  std::string longhdr3 = make_npy(good_header, four_f4, 3);
  longhdr3[11] = '\x01';
  expect_error(longhdr3, ErrorKind::Malformed, "beyond the end");
  // Header cut in the middle of the dict.
  expect_error(kF4_2x3.substr(0, 40), ErrorKind::Malformed, "beyond the end");
  expect_error(make_npy("{'descr': '<f4', 'shape': (2, 2), }\n", four_f4), ErrorKind::Malformed, "fortran_order");
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False}\n", four_f4), ErrorKind::Malformed, "'shape'");
  expect_error(make_npy("{'fortran_order': False, 'shape': (2, 2)}\n", four_f4), ErrorKind::Malformed, "'descr'");
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'x': 1}\n", four_f4),
               ErrorKind::Malformed, "unexpected header key");
  expect_error(make_npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)}", four_f4),
               ErrorKind::Malformed, "twice");
  expect_error(make_npy("{'descr': '<f4' 'fortran_order': False, 'shape': (2, 2)}", four_f4), ErrorKind::Malformed,
               "syntax");
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': Flase, 'shape': (2, 2)}", four_f4), ErrorKind::Malformed,
               "True or False");
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2}", four_f4), ErrorKind::Malformed,
               "syntax");
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -2)}", four_f4), ErrorKind::Malformed,
               "integer");
  expect_error(make_npy("{'descr': '<f4, 'fortran_order': False, 'shape': (2, 2)}", four_f4), ErrorKind::Malformed,
               "syntax");
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)} junk", four_f4),
               ErrorKind::Malformed, "after the closing");
  expect_error(make_npy("", four_f4), ErrorKind::Malformed, "expected '{'");
  // Data shorter than the shape needs, and longer.
  expect_error(kF4_2x3.substr(0, kF4_2x3.size() - 1), ErrorKind::Malformed, "shorter");
  expect_error(kF4_2x3 + "x", ErrorKind::Malformed, "follow the data");
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4)}", four_f4),
               ErrorKind::Malformed, "shorter");
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}", four_f4),
               ErrorKind::Malformed, "overflow");
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536, 65536, 65536)}", four_f4),
               ErrorKind::Malformed, "shorter");
  // Bool bytes must be 0 or 1.
  expect_error(make_npy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,)}", "\x01\x02"), ErrorKind::Malformed,
               "not 0 or 1");
}

TEST(NpyReadTest, ValidButUnsupported) {
  expect_error(kC8_1, ErrorKind::Unsupported, "<c8");
  expect_error(make_npy("{'descr': '<U3', 'fortran_order': False, 'shape': (1,)}", std::string(12, 'a')),
               ErrorKind::Unsupported, "<U3");
  expect_error(make_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", std::string(4, 'a')),
               ErrorKind::Unsupported, "structured");
  std::string v4 = make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", std::string(4, '\0'));
  v4[6] = '\x04';
  expect_error(v4, ErrorKind::Unsupported, "version 4.0");
  expect_error(
      make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1)}", std::string(4, '\0')),
      ErrorKind::Unsupported, "rank 9");
  // Empty, but with a prefix product beyond 2^31-1.
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000, 0)}", ""),
               ErrorKind::Unsupported, "2^31-1");
}

TEST(NpyWriteTest, MatchesNumpyBytes) {
  auto as_string = [](const std::vector<std::byte>& b) {
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  };
  // Byte-identical to what np.save wrote for the same values.
  EXPECT_EQ(as_string(npy_bytes(parse(kF4_2x3))), kF4_2x3);
  EXPECT_EQ(as_string(npy_bytes(parse(kF8Scalar))), kF8Scalar);
  EXPECT_EQ(as_string(npy_bytes(parse(kI8_3))), kI8_3);
  EXPECT_EQ(as_string(npy_bytes(parse(kU1_2x2))), kU1_2x2);
  EXPECT_EQ(as_string(npy_bytes(parse(kB1_4))), kB1_4);
  EXPECT_EQ(as_string(npy_bytes(parse(kF2_2))), kF2_2);
  EXPECT_EQ(as_string(npy_bytes(parse(kF4Empty_0x3))), kF4Empty_0x3);
  // A Fortran-order input is written back in C order with the same logical values.
  Tensor f = parse(kF4Fortran_2x3);
  Tensor back = parse(as_string(npy_bytes(f)));
  EXPECT_EQ(vals<float>(back), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  // A strided view is written row-major.
  Tensor t = parse(kF4_2x3).transpose(0, 1);
  Tensor tb = parse(as_string(npy_bytes(t)));
  EXPECT_EQ(tb.shape(), Shape({3, 2}));
  EXPECT_EQ(vals<float>(tb), (std::vector<float>{0, 4.5f, 1.5f, 6, 3, 7.5f}));
  EXPECT_THROW(npy_bytes(Tensor::zeros(DType::BF16, Shape{1})), Error);
}

TEST(NpyWriteTest, FileRoundTrip) {
  auto dir = std::filesystem::temp_directory_path() /
             ("npy_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  Tensor t = parse(kI4Fortran_2x3x2);
  write_npy(dir / "x.npy", t);
  Tensor r = read_npy(dir / "x.npy");
  EXPECT_EQ(r.shape(), t.shape());
  EXPECT_EQ(vals<int32_t>(r), vals<int32_t>(t));
  try {
    read_npy(dir / "missing.npy");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace onemodel::cli
