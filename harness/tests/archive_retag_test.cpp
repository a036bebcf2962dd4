// Re-tagging a torch::save archive: a CPU archive re-tagged to cuda:0 is a genuine CUDA
// checkpoint (a host without CUDA refuses it, a map to the CPU restores it bit for bit), and
// re-tagging it back gives the original archive's tensors.
#include <torchplace/archive_retag.h>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>

#include <torchplace/error_class.h>
#include <torchplace/temp_dir.h>

namespace tp::archive {
namespace {

TEST(ArchiveRetag, BinunicodeIsOpcodeLengthText) {
  EXPECT_EQ(binunicode("cpu"), std::string("X\x03\0\0\0cpu", 8));
  EXPECT_EQ(binunicode("cuda:0"), std::string("X\x06\0\0\0cuda:0", 11));
}

TEST(ArchiveRetag, ReplaceStringCountsAndKeepsTheRest) {
  std::string pickle = "a" + binunicode("cpu") + "b" + binunicode("cpu") + binunicode("cpux");
  EXPECT_EQ(replace_string(pickle, "cpu", "cuda:0"), 2);
  EXPECT_EQ(pickle, "a" + binunicode("cuda:0") + "b" + binunicode("cuda:0") + binunicode("cpux"));
}

TEST(ArchiveRetag, CudaTaggedArchiveLoadsBitIdenticalWithAMapToTheCpu) {
  const TempDir dir("archive_retag");
  torch::nn::Linear saved(4, 3);
  torch::save(saved, dir.file("cpu.pt"));
  EXPECT_GE(retag_devices(dir.file("cpu.pt"), dir.file("cuda.pt"), "cpu", "cuda:0"), 1);

  torch::nn::Linear loaded(4, 3);
  torch::load(loaded, dir.file("cuda.pt"), torch::kCPU);
  EXPECT_TRUE(torch::equal(loaded->weight, saved->weight));
  EXPECT_TRUE(torch::equal(loaded->bias, saved->bias));
  EXPECT_EQ(loaded->weight.device(), torch::Device(torch::kCPU));
}

TEST(ArchiveRetag, CudaTaggedArchiveIsRefusedWithoutCuda) {
  if (torch::cuda::is_available()) {
    GTEST_SKIP() << "needs a host without CUDA: here the archive would load onto cuda:0";
  }
  const TempDir dir("archive_retag");
  torch::nn::Linear saved(4, 3);
  torch::save(saved, dir.file("cpu.pt"));
  retag_devices(dir.file("cpu.pt"), dir.file("cuda.pt"), "cpu", "cuda:0");
  torch::nn::Linear loaded(4, 3);
  try {
    torch::load(loaded, dir.file("cuda.pt"));
    ADD_FAILURE() << "a cuda:0-tagged archive loaded on a host without CUDA";
  } catch (const c10::Error& error) {
    EXPECT_EQ(name_of(classify(error.what_without_backtrace())), "BackendUnavailable")
        << error.what_without_backtrace();
  }
}

TEST(ArchiveRetag, RetagBackRestoresAnArchiveThatLoadsWithoutAMap) {
  const TempDir dir("archive_retag");
  torch::nn::Linear saved(4, 3);
  torch::save(saved, dir.file("cpu.pt"));
  retag_devices(dir.file("cpu.pt"), dir.file("cuda.pt"), "cpu", "cuda:0");
  retag_devices(dir.file("cuda.pt"), dir.file("back.pt"), "cuda:0", "cpu");
  torch::nn::Linear loaded(4, 3);
  torch::load(loaded, dir.file("back.pt"));
  EXPECT_TRUE(torch::equal(loaded->weight, saved->weight));
}

TEST(ArchiveRetag, RefusesAnArchiveWithoutTheDeviceAndKeepsTheDestination) {
  const TempDir dir("archive_retag");
  torch::nn::Linear saved(4, 3);
  torch::save(saved, dir.file("cpu.pt"));
  std::ofstream(dir.file("keep.pt")) << "already here";
  EXPECT_THROW(retag_devices(dir.file("cpu.pt"), dir.file("keep.pt"), "cuda:3", "cpu"),
               std::invalid_argument);
  std::ifstream kept(dir.file("keep.pt"));
  const std::string text((std::istreambuf_iterator<char>(kept)), {});
  EXPECT_EQ(text, "already here");
}

TEST(ArchiveRetag, MissingSourceRaisesLibTorchsFileError) {
  const TempDir dir("archive_retag");
  try {
    retag_devices(dir.file("absent.pt"), dir.file("out.pt"), "cpu", "cuda:0");
    ADD_FAILURE() << "re-tagged a file that does not exist";
  } catch (const c10::Error& error) {
    EXPECT_EQ(name_of(classify(error.what_without_backtrace())), "FileNotFound")
        << error.what_without_backtrace();
  }
}

}  // namespace
}  // namespace tp::archive
