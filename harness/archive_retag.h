// Rewrites the records of a torch::save archive or a TorchScript archive (torch::jit::Module::save:
// data.pkl, constants.pkl, code/, data/; both are zips read and written with LibTorch's own
// caffe2::serialize::PyTorchStreamReader/Writer, present in 1.13 and 2.x). The use it is made
// for: re-tagging every storage of a checkpoint to another device string, so that a suite can
// make a genuine CUDA-tagged checkpoint on a machine without CUDA, and damaging an archive on
// purpose (a record dropped).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace tp::archive {

// Returns the new bytes of the record `name` (its path inside the archive, e.g. "data.pkl").
using RecordEdit = std::function<std::string(const std::string& name, std::string bytes)>;

// Copies every record of the archive at `source` to a new archive at `destination`, passing
// each through `edit`. The destination is written through a temporary file and a rename, so a
// failure leaves whatever was there. Errors of LibTorch's reader (missing file, damaged zip)
// propagate as c10::Error; std::runtime_error names an unwritable destination.
void rewrite_records(const std::string& source, const std::string& destination,
                     const RecordEdit& edit);

// The pickle string `text` as the Pickler writes it: BINUNICODE, 'X', a 4-byte little-endian
// length, the UTF-8 bytes.
std::string binunicode(const std::string& text);

// Replaces every occurrence of binunicode(from) with binunicode(to) in `pickle`; returns how
// many it replaced. Persistent ids in data.pkl memoise the device string, so one storage list
// usually holds it once.
int replace_string(std::string& pickle, const std::string& from, const std::string& to);

// Copies the archive at `source` to `destination` without the records `drop` selects (a
// TorchScript archive without its code/ or constants.pkl). Returns how many it dropped; throws
// std::invalid_argument, writing nothing, when `drop` selects none.
int drop_records(const std::string& source, const std::string& destination,
                 const std::function<bool(const std::string& name)>& drop);

// Rewrites every storage's device string in every .pkl record (data.pkl; a TorchScript
// archive's constants.pkl too, where its tensor constants are) from `from_device` to
// `to_device` (e.g. "cpu" -> "cuda:0"). Returns the count of replaced strings; throws
// std::invalid_argument when the archive holds no `from_device` string at all, because then
// the result would not be what its name promises.
int retag_devices(const std::string& source, const std::string& destination,
                  const std::string& from_device, const std::string& to_device);

}  // namespace tp::archive
