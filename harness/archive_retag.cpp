#include "archive_retag.h"

#include <caffe2/serialize/inline_container.h>

#include <stdexcept>

#include "internal/atomic_write.h"

namespace tp::archive {

namespace {

// The bytes of the archive at `source` with every record passed through `edit`, less those
// `drop` selects (when given).
std::string rewritten_archive(const std::string& source, const RecordEdit& edit,
                              const std::function<bool(const std::string&)>& drop = {}) {
  caffe2::serialize::PyTorchStreamReader reader(source);
  std::string archive_bytes;
  {
    caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t size) {
      archive_bytes.append(static_cast<const char*>(data), size);
      return size;
    });
    // Stored records keep their order; "version" is copied, so the writer adds none of its own.
    for (const std::string& name : reader.getAllRecords()) {
      if (drop && drop(name)) continue;
      auto [data, size] = reader.getRecord(name);
      std::string bytes(static_cast<const char*>(data.get()), size);
      const std::string edited = edit(name, std::move(bytes));
      writer.writeRecord(name, edited.data(), edited.size());
    }
    writer.writeEndOfFile();
  }
  return archive_bytes;
}

bool is_pickle(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".pkl") == 0;
}

}  // namespace

void rewrite_records(const std::string& source, const std::string& destination,
                     const RecordEdit& edit) {
  write_atomically(destination, rewritten_archive(source, edit));
}

int drop_records(const std::string& source, const std::string& destination,
                 const std::function<bool(const std::string& name)>& drop) {
  int dropped = 0;
  const auto counted = [&](const std::string& name) { return drop(name) && ++dropped > 0; };
  const std::string archive_bytes = rewritten_archive(
      source, [](const std::string&, std::string bytes) { return bytes; }, counted);
  if (dropped == 0) {  // checked before writing: the destination keeps what it had
    throw std::invalid_argument("drop_records: " + source + " holds no record to drop");
  }
  write_atomically(destination, archive_bytes);
  return dropped;
}

std::string binunicode(const std::string& text) {
  std::string bytes = "X";
  const auto length = static_cast<uint32_t>(text.size());
  for (int shift = 0; shift < 32; shift += 8)
    bytes.push_back(static_cast<char>((length >> shift) & 0xff));
  return bytes + text;
}

int replace_string(std::string& pickle, const std::string& from, const std::string& to) {
  const std::string old_bytes = binunicode(from);
  const std::string new_bytes = binunicode(to);
  int replaced = 0;
  for (size_t at = pickle.find(old_bytes); at != std::string::npos;
       at = pickle.find(old_bytes, at + new_bytes.size())) {
    pickle.replace(at, old_bytes.size(), new_bytes);
    ++replaced;
  }
  return replaced;
}

int retag_devices(const std::string& source, const std::string& destination,
                  const std::string& from_device, const std::string& to_device) {
  int replaced = 0;
  const std::string archive_bytes =
      rewritten_archive(source, [&](const std::string& name, std::string bytes) {
        if (is_pickle(name)) replaced += replace_string(bytes, from_device, to_device);
        return bytes;
      });
  if (replaced == 0) {  // checked before writing: the destination keeps what it had
    throw std::invalid_argument("retag_devices: " + source + " holds no storage tagged '" +
                                from_device + "'; nothing to re-tag");
  }
  write_atomically(destination, archive_bytes);
  return replaced;
}

}  // namespace tp::archive
