#!/usr/bin/env python3
"""Which scenario and fix of this suite torchplace explain names for a classified message
(torchplace.explain.coverage.covered_by, in process, no classifier): each class and each case
within a class, with its reason and its fix. The messages are real, from harness/messages/ or a
public report (the source beside each); the class given is the one the corpus expects of it.
A message is given as the classifier hands it on (its core); some keep the "RuntimeError: " that
the classifier would remove, where the case does not depend on it."""
import json
import unittest

from torchplace import schema
from torchplace.explain import coverage

CORPUS = schema.ROOT / "harness" / "messages" / "corpus.json"


def corpus_message(source, version):
    """A message of harness/messages/corpus.json, as the classifier hands it on (stripped)."""
    entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]
    (message,) = {e["message"] for e in entries if (e["source"], e["version"]) == (source, version)}
    return message.strip()


def covered(error_class, message):
    return coverage.covered_by(error_class, message, coverage.named(message))


class Coverage(unittest.TestCase):
    def expect(self, error_class, message, *entries):
        """entries: (scenario, why, a phrase of the fix) in order."""
        got = covered(error_class, message)
        self.assertEqual(len(got), len(entries), got)
        for entry, (scenario, why, fix) in zip(got, entries):
            self.assertEqual((entry["scenario"], entry["why"]), (scenario, why), entry)
            self.assertIn(fix, entry["fix"])
            path = f"scenarios/{scenario}.cpp" if scenario else ""
            self.assertEqual(entry["scenario_file"], path)
            self.assertEqual(entry["readme"], coverage.README)

    def test_two_gpus_before_the_index(self):
        # zhongyy/Face-Transformer issue 37: two GPUs named, the argument an index
        self.expect(
            "DeviceMismatch",
            "Expected all tensors to be on the same device, but found at least two devices, "
            "cuda:0 and cuda:1! (when checking argument for argument index in method "
            "wrapper_CUDA_scatter__value)",
            ("multi_gpu", "two GPUs named", "data_parallel"),
        )

    def test_indices_on_the_host(self):
        cpu_indices = ("cpu_indices", "CPU indices into a weight on the device", "batch_mover.h")
        # haoosz/ConceptExpress issue 5: the index (named) on the CPU, the weight on cuda:0
        self.expect(
            "DeviceMismatch",
            "Expected all tensors to be on the same device, but found at least two devices, "
            "cuda:0 and cpu! (when checking argument for argument index in method "
            "wrapper__index_select)",
            cpu_indices,
        )
        # huggingface/accelerate issue 210: indices named, no placement given
        self.expect(
            "DeviceMismatch",
            "RuntimeError: Input, output and indices must be on the current device",
            cpu_indices,
        )

    def test_a_weight_left_on_the_cpu(self):
        # deepspeedai/DeepSpeedExamples issue 743: the indexed tensor (in parentheses) on the CPU
        self.expect(
            "DeviceMismatch",
            "indices should be either on cpu or on the same device as the indexed tensor (cpu)",
            (
                "checkpoint_map_location",
                "a weight left on the CPU (a checkpoint loaded there, say) with indices on the "
                "device",
                "torch::load(module, path, device)",
            ),
        )

    def test_targets_on_another_device(self):
        # corpus.json, cell:forgotten_labels/loss=nll/variant=broken/device=sim:0
        self.expect(
            "DeviceMismatch",
            "Expected all tensors to be on the same device, but found at least two devices, "
            "sim:0 and cpu! (when checking argument for argument target in method "
            "wrapper_SIM_nll_loss_forward_output)",
            ("forgotten_labels", "targets left on the CPU", "batch_mover.h"),
        )

    def test_any_other_operand_names_three_scenarios(self):
        # ClownsharkBatwing/RES4LYF pull 223
        self.expect(
            "DeviceMismatch",
            "Expected all tensors to be on the same device, but got mat1 is on cpu, different "
            "from other tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm)",
            ("forgotten_labels", "an input or target left on another device", "batch_mover.h"),
            (
                "unregistered_buffers",
                "a module member that module.to(device) does not move",
                "register_buffer",
            ),
            (
                "checkpoint_map_location",
                "a checkpoint mapped elsewhere",
                "torch::load(module, path, device)",
            ),
        )

    def test_the_sims_refusal(self):
        # This suite's own text (reports/torchplace/sim_library.py _check_version), filled in.
        self.expect(
            "BackendUnavailable",
            "torchplace.sim: /x/libtorchplace_sim_python.so was built against LibTorch 2.6.0, "
            "but this torch is 2.14.1: build torchplace_sim_python against this torch",
            ("", "the sim's library does not fit this torch", "TORCHPLACE_SIM_LIBRARY"),
        )

    def test_pinned_memory_without_cuda(self):
        pinned = ("pinned_non_blocking", "pinned memory needs the accelerator", "is_available()")
        # corpus.json, probe:pin_memory (cut after its first sentence)
        self.expect(
            "BackendUnavailable",
            "Could not run 'aten::_pin_memory' with arguments from the 'CUDA' backend.",
            pinned,
        )
        # The same whole (1.13.1): the dispatcher's list of kernels below, none of them "pin"
        self.expect("BackendUnavailable", corpus_message("probe:pin_memory", "1.13.1"), pinned)
        # corpus.json, cell:pinned_non_blocking/case=pin_memory_without_cuda/device=cpu
        self.expect(
            "BackendUnavailable",
            "You should register `PrivateUse1HooksInterface` for PrivateUse1 before call "
            "`getPinnedMemoryAllocator`.",
            pinned,
        )

    def test_no_cuda_otherwise(self):
        # serend1p1ty/SeqNet issue 36 (cut after its first sentence)
        self.expect(
            "BackendUnavailable",
            "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
            (
                "checkpoint_map_location",
                "a CUDA-tagged archive or a CUDA tensor on a host or build without CUDA",
                "torch::kCPU",
            ),
        )

    def test_half_precision_beside_float(self):
        # OpenBMB/MiniCPM-V issue 234; mosaicml/llm-foundry issue 333
        amp = ("amp", "a half-precision operand beside a float one", "autocast")
        message = "RuntimeError: mat1 and mat2 must have the same dtype, but got Float and Half"
        self.expect("DtypeMismatch", message, amp)
        self.expect("DtypeMismatch", "expected scalar type BFloat16 but found Float", amp)

    def test_integer_targets(self):
        labels = ("forgotten_labels", "targets of the wrong integer dtype", "torch::kLong")
        # corpus.json, probe:cross_entropy_int_targets: no argument named
        self.expect("DtypeMismatch", "expected scalar type Long but found Int", labels)
        # observed: mse_loss(float input, int32 target).backward() on Debian's 1.13.1 (Int alone)
        self.expect("DtypeMismatch", "Found dtype Int but expected Float", labels)
        # segmentation_models.pytorch issue 466: the target named
        self.expect(
            "DtypeMismatch",
            "RuntimeError: Expected object of scalar type Long but got scalar type Float for "
            "argument #2 'target' in call to _thnn_nll_loss2d_forward",
            labels,
        )

    def test_a_member_left_in_the_old_dtype(self):
        # corpus.json, cell:unregistered_buffers/check=to_float64/variant=plain_member/device=cpu
        self.expect(
            "DtypeMismatch",
            "expected scalar type Double but found Float",
            ("unregistered_buffers", "a member left in the old dtype", "module.to(dtype)"),
        )

    def test_the_checkpoint_classes(self):
        checkpoint = (
            "checkpoint_map_location",
            "the checkpoint cases: missing key, missing file, truncated archive",
            "save and load the same module",
        )
        for error_class, message in (
            # corpus.json, cell:checkpoint_map_location/case=other_module_checkpoint/device=cpu
            ("MissingKey", "No such serialized submodule: 'encoder'"),
            # corpus.json, cell:checkpoint_map_location/case=missing_file/device=cpu
            ("FileNotFound", "open file failed because of errno 2 on fopen: , file path: x.pt"),
            # Tencent-Hunyuan/HunyuanVideo issue 73
            (
                "CorruptArchive",
                "RuntimeError: PytorchStreamReader failed reading file data/3: invalid header or "
                "archive is corrupted",
            ),
        ):
            with self.subTest(error_class=error_class):
                self.expect(error_class, message, checkpoint)

    def test_sync_collectives_and_memory(self):
        # c10/cuda/CUDAFunctions.cpp warn_or_error_on_sync (1.13.1, 2.6.0)
        self.expect(
            "HostSync",
            "called a synchronizing CUDA operation",
            (
                "transfer_budget",
                "a synchronizing CUDA operation under sync-debug's error mode",
                "read metrics once",
            ),
        )
        ddp = ("ddp", "a collective whose peer failed or never joined", "every rank's log")
        # OFA-Sys/OFA issue 271; rstrudel/segmenter issue 60
        self.expect(
            "CollectiveTimeout",
            "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout",
            ddp,
        )
        self.expect("CollectiveFailure", "RuntimeError: NCCL Error 2: unhandled system error", ddp)
        # Comfy-Org/ComfyUI issue 9529 (cut after its first sentence)
        self.expect(
            "OutOfMemory",
            "HIP out of memory. Tried to allocate 432.00 MiB.",
            ("", "outside this suite's scenarios", "none in this suite"),
        )

    def test_an_unknown_error_names_nothing(self):
        # VICO-UoE/MTPSL issue 3 (the python_shape_error log): no family knows it
        shape = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x2 and 6x64)"
        self.assertEqual(covered("Unclassified", shape), [])


if __name__ == "__main__":
    unittest.main()
