// write_atomically (results.json, re-tagged archives): the text arrives whole and replaces what
// was there; a write that fails (a full disk: the temporary is /dev/full) or a rename that fails
// (the path is a folder) throws naming the path, keeps the old file and leaves no temporary.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include <torchplace/temp_dir.h>

#include "internal/atomic_write.h"

namespace tp {
namespace {

// At most 4 KiB: a slip that left the path a link to /dev/full must not read it without end.
std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text(4096, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

bool exists(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0;
}

// The error's text, or "" where none was thrown.
std::string error_of(const std::string& path, const std::string& text) {
  try {
    write_atomically(path, text);
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  return "";
}

TEST(AtomicWrite, WritesTheTextOnceAndReplacesWhatWasThere) {
  const TempDir dir("atomic_write");
  const std::string path = dir.file("results.json");
  write_atomically(path, "first");
  EXPECT_EQ(read_all(path), "first");
  write_atomically(path, "second, longer");
  EXPECT_EQ(read_all(path), "second, longer");
  EXPECT_FALSE(exists(path + ".tmp"));
}

TEST(AtomicWrite, AWriteThatFailsThrowsAndKeepsTheOldFile) {
  if (!exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this host to make a write fail";
  const TempDir dir("atomic_write");
  const std::string path = dir.file("results.json");
  write_atomically(path, "old");
  ASSERT_EQ(::symlink("/dev/full", (path + ".tmp").c_str()), 0);  // every write: ENOSPC
  EXPECT_EQ(error_of(path, "new"), "cannot write " + path + ".tmp");
  EXPECT_EQ(read_all(path), "old");
}

TEST(AtomicWrite, ARenameThatFailsThrowsNamingBothAndLeavesNoTemporary) {
  const TempDir dir("atomic_write");
  const std::string path = dir.file("taken");
  ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((path + "/inside").c_str(), 0700), 0);  // a folder that holds something
  EXPECT_EQ(error_of(path, "text"), "cannot rename " + path + ".tmp to " + path);
  EXPECT_FALSE(exists(path + ".tmp"));
}

}  // namespace
}  // namespace tp
