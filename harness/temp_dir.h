// A temporary folder of one's own, removed with everything in it when it goes out of scope.
// Cells that write files (checkpoints, archives) each make one, so that no two cells, and no
// two runs of the suite, share a path.
#pragma once
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <filesystem>
#include <string>

namespace tp {

class TempDir {
 public:
  // `label` names the folder for a reader of /tmp; any character outside [A-Za-z0-9_-] becomes '_'.
  explicit TempDir(const std::string& label) {
    static std::atomic<int> counter{0};
    std::string safe = label;
    for (char& c : safe) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
    }
    path_ =
        std::filesystem::temp_directory_path() /
        ("torchplace-" + safe + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;  // a destructor must not throw; a leftover folder is harmless
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace tp
