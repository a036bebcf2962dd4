// tp::TempDir (temp_dir.h): a folder of its own under $TMPDIR, named after a label made safe for
// a path, and removed with everything in it when it goes, a link removed and not followed.
#include <torchplace/temp_dir.h>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <string>
#include <type_traits>

namespace temp_dir_test {  // unity-built with the other harness tests
namespace {

bool exists(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0;
}

std::string folder_of(const tp::TempDir& dir) {
  const std::string file = dir.file("x");
  return file.substr(0, file.size() - 2);
}

// The folder's own name: "torchplace-<safe label>-<pid>-XXXXXX".
std::string name_of(const tp::TempDir& dir) {
  const std::string folder = folder_of(dir);
  return folder.substr(folder.rfind('/') + 1);
}

// Sets an environment variable for its lifetime, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(TempDir, KeepsALabelsSafeCharactersAndReplacesTheRest) {
  const std::string pid = std::to_string(::getpid());
  const tp::TempDir plain("Ok-label_9");
  EXPECT_EQ(name_of(plain).rfind("torchplace-Ok-label_9-" + pid + "-", 0), 0u) << name_of(plain);
  const tp::TempDir unsafe("a/b c.d*");  // a slash would put the folder elsewhere
  EXPECT_EQ(name_of(unsafe).rfind("torchplace-a_b_c_d_-" + pid + "-", 0), 0u) << name_of(unsafe);
  EXPECT_TRUE(exists(folder_of(unsafe)));
}

TEST(TempDir, IsMadeUnderTmpdir) {
  const tp::TempDir base("tmpdir_base");
  const ScopedEnv tmpdir("TMPDIR", folder_of(base));
  const tp::TempDir inner("inner");
  EXPECT_EQ(folder_of(inner).rfind(folder_of(base) + "/torchplace-inner-", 0), 0u)
      << folder_of(inner);
}

TEST(TempDir, RemovesItsFolderWithNestedFoldersAndFiles) {
  std::string folder;
  {
    const tp::TempDir dir("removal");
    folder = folder_of(dir);
    ASSERT_EQ(::mkdir(dir.file("sub").c_str(), 0700), 0);
    ASSERT_EQ(::mkdir(dir.file("sub/deeper").c_str(), 0700), 0);
    std::ofstream(dir.file("top.pt")) << "synthetic";
    std::ofstream(dir.file("sub/deeper/leaf.pt")) << "synthetic";
    ASSERT_TRUE(exists(dir.file("sub/deeper/leaf.pt")));
  }
  EXPECT_FALSE(exists(folder)) << folder << " was left behind";
}

// A link inside goes, what it points to stays (FTW_PHYS: nftw does not follow it).
TEST(TempDir, RemovesALinkAndKeepsWhatItPointsTo) {
  const tp::TempDir kept("kept");
  std::ofstream(kept.file("keep.pt")) << "synthetic";
  std::string folder;
  {
    const tp::TempDir dir("links");
    folder = folder_of(dir);
    ASSERT_EQ(::symlink(folder_of(kept).c_str(), dir.file("to_folder").c_str()), 0);
    ASSERT_EQ(::symlink(kept.file("keep.pt").c_str(), dir.file("to_file").c_str()), 0);
  }
  EXPECT_FALSE(exists(folder)) << folder << " was left behind";
  EXPECT_TRUE(exists(kept.file("keep.pt"))) << "removing a link removed what it points to";
}

// A copy would remove the folder when it goes, while the original still uses it.
TEST(TempDir, CannotBeCopied) {
  EXPECT_FALSE(std::is_copy_constructible_v<tp::TempDir>);
  EXPECT_FALSE(std::is_copy_assignable_v<tp::TempDir>);
}

}  // namespace
}  // namespace temp_dir_test
