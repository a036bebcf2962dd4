// Re-tagging a torch::save archive: a CPU archive re-tagged to cuda:0 is a genuine CUDA
// checkpoint (a host without CUDA refuses it, a map to the CPU restores it bit for bit), and
// re-tagging it back gives the original archive's tensors. The same holds for a TorchScript
// archive (torch::jit::Module::save), and drop_records damages one on purpose.
#include <torchplace/archive_retag.h>

#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <fstream>
#include <string>
#include <vector>

#include <torchplace/error_class.h>
#include <torchplace/temp_dir.h>

namespace tp::archive {
namespace {

TEST(ArchiveRetag, BinunicodeIsOpcodeLengthText) {
  EXPECT_EQ(binunicode("cpu"), std::string("X\x03\0\0\0cpu", 8));
  EXPECT_EQ(binunicode("cuda:0"), std::string("X\x06\0\0\0cuda:0", 11));
  // the length's every byte, little-endian: 300 = 0x12c, 70000 = 0x11170
  EXPECT_EQ(binunicode(std::string(300, 'a')).substr(0, 5), std::string("X\x2c\x01\0\0", 5));
  EXPECT_EQ(binunicode(std::string(70000, 'a')).substr(0, 5), std::string("X\x70\x11\x01\0", 5));
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

std::string record_text(caffe2::serialize::PyTorchStreamReader& reader, const std::string& name) {
  auto [data, size] = reader.getRecord(name);
  return std::string(static_cast<const char*>(data.get()), size);
}

// Every record whose name ends in .pkl is re-tagged (data.pkl, constants.pkl, a short name too);
// the others (tensor data, code) are copied byte for byte, even when they hold the same bytes.
TEST(ArchiveRetag, RetagsEveryPickleRecordAndCopiesTheRestByteForByte) {
  const TempDir dir("archive_retag");
  const std::string tagged = "(" + binunicode("cpu") + ")";  // synthetic record contents
  const std::vector<std::string> pickles = {"data.pkl", "constants.pkl", "a.pkl"};
  const std::vector<std::string> others = {"data/0", "code/__torch__/m.py", "extra/pkl"};
  {
    caffe2::serialize::PyTorchStreamWriter writer(dir.file("synthetic.pt"));
    for (const std::string& name : pickles) writer.writeRecord(name, tagged.data(), tagged.size());
    for (const std::string& name : others) writer.writeRecord(name, tagged.data(), tagged.size());
  }
  EXPECT_EQ(retag_devices(dir.file("synthetic.pt"), dir.file("cuda.pt"), "cpu", "cuda:0"), 3);
  caffe2::serialize::PyTorchStreamReader reader(dir.file("cuda.pt"));
  for (const std::string& name : pickles) {
    EXPECT_EQ(record_text(reader, name), "(" + binunicode("cuda:0") + ")") << name;
  }
  for (const std::string& name : others) EXPECT_EQ(record_text(reader, name), tagged) << name;
}

// A TorchScript module with a parameter and a buffer, saved to `path`.
torch::jit::Module saved_script_module(const std::string& path) {
  torch::jit::Module module("Scaled");
  module.register_parameter("weight", torch::randn({3}), false);
  module.register_buffer("scale", torch::rand({3}));
  module.define("def forward(self, x):\n    return x * self.weight * self.scale\n");
  module.save(path);
  return module;
}

TEST(ArchiveRetag, TorchScriptArchiveRetagsAndMapsBackBitIdentical) {
  const TempDir dir("archive_retag");
  const torch::jit::Module saved = saved_script_module(dir.file("cpu.pt"));
  EXPECT_GE(retag_devices(dir.file("cpu.pt"), dir.file("cuda.pt"), "cpu", "cuda:0"), 1);
  torch::jit::Module loaded = torch::jit::load(dir.file("cuda.pt"), torch::kCPU);
  EXPECT_TRUE(torch::equal(loaded.attr("weight").toTensor(), saved.attr("weight").toTensor()));
  EXPECT_TRUE(torch::equal(loaded.attr("scale").toTensor(), saved.attr("scale").toTensor()));
  if (!torch::cuda::is_available()) {  // the re-tag took: without the map the archive is refused
    EXPECT_THROW(torch::jit::load(dir.file("cuda.pt")), c10::Error);
  }
}

TEST(ArchiveRetag, DropRecordsLeavesTheRestAndRefusesToDropNothing) {
  const TempDir dir("archive_retag");
  saved_script_module(dir.file("full.pt"));
  EXPECT_EQ(drop_records(dir.file("full.pt"), dir.file("no_constants.pt"),
                         [](const std::string& name) { return name == "constants.pkl"; }),
            1);
  caffe2::serialize::PyTorchStreamReader reader(dir.file("no_constants.pt"));
  EXPECT_FALSE(reader.hasRecord("constants.pkl"));
  EXPECT_TRUE(reader.hasRecord("data.pkl"));
  EXPECT_THROW(drop_records(dir.file("full.pt"), dir.file("none.pt"),
                            [](const std::string& name) { return name == "absent.pkl"; }),
               std::invalid_argument);
  EXPECT_FALSE(std::ifstream(dir.file("none.pt")).good());
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
