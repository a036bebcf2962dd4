// A temporary folder of one's own, removed with everything in it when it goes out of scope.
// Cells that write files (checkpoints, archives) each make one, so that no two cells, and no
// two runs of the suite, share a path.
//
// POSIX calls, not std::filesystem: pip's libtorch_cpu.so exports its own copies of
// std::filesystem's functions, which a program built with another libstdc++ binds to, and its
// remove_all jumped to address 0 (SIGSEGV in every torchscript_load cell, pip torch 2.11 on an
// H200 with gcc 13.3, seen in cuda-gdb).
#pragma once
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace tp {

class TempDir {
 public:
  // `label` names the folder for a reader of $TMPDIR (/tmp); any character outside
  // [A-Za-z0-9_-] becomes '_'.
  explicit TempDir(const std::string& label) {
    std::string safe = label;
    for (char& c : safe) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
    }
    const char* base = std::getenv("TMPDIR");
    const std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                                "/torchplace-" + safe + "-" + std::to_string(::getpid()) +
                                "-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    if (::mkdtemp(name.data()) == nullptr) {
      throw std::runtime_error("tp::TempDir: cannot create " + pattern + ": " +
                               std::strerror(errno));
    }
    path_ = name.data();
  }
  ~TempDir() {  // a destructor must not throw; a leftover folder is harmless
    ::nftw(path_.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  static int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
    ::remove(path);
    return 0;  // on: remove what can be removed
  }

  std::string path_;
};

}  // namespace tp
