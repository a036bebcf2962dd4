#!/usr/bin/env python3
"""What torchplace explain reads off a message's first line (torchplace.explain.coverage.named,
in process, no classifier): the argument, the method, the devices and the dtypes, in the order
the message names them. Every message is a real one: from harness/messages/ (its source beside
it) or a public report named beside it."""
import json
import unittest
from pathlib import Path

from torchplace.explain.coverage import named

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "explain" / "logs.json"


class Names(unittest.TestCase):
    def check(self, message, argument=None, method=None, devices=(), dtypes=()):
        names = named(message)
        self.assertEqual(
            (names["argument"], names["method"], names["devices"], names["dtypes"]),
            (argument, method, list(devices), list(dtypes)),
            message,
        )
        return names

    def test_the_method_in_each_wording(self):
        # ClownsharkBatwing/RES4LYF pull 223: the ~2.8 wrapper check, "in method"
        names = self.check(
            "Expected all tensors to be on the same device, but got mat1 is on cpu, different "
            "from other tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm)",
            "mat1",
            "wrapper_CUDA_addmm",
            ["cpu", "cuda:0"],
        )
        self.assertEqual(names["where"][0], {"tensor": "mat1", "device": "cpu"})
        # yangjianxin1/GPT2-chitchat issue 8: 1.x's TH bindings, "in call to"
        self.check(
            "Expected object of device type cuda but got device type cpu for argument #3 "
            "'index' in call to _th_index_select",
            "index",
            "_th_index_select",
            ["cuda", "cpu"],
        )
        # IDSIA/hhmarl_2D issue 12: checkSameGPU, "while checking arguments for"
        self.check(
            "RuntimeError: Tensor for argument #2 'mat1' is on CPU, but expected it to be on "
            "GPU (while checking arguments for addmm)",
            "mat1",
            "addmm",
            ["CPU", "GPU"],
        )

    def test_each_way_of_naming_a_device(self):
        cases = [
            # dawnranger/pytorch-AGNN issue 5
            ("RuntimeError: expected device cpu but got device cuda:0", ["cpu", "cuda:0"]),
            # LuyaooChen/uninformed-students-pytorch issue 3
            ("RuntimeError: CUDA error: invalid device ordinal", ["CUDA"]),
            # callummcdougall/ARENA_2.0 issue 21
            (
                "RuntimeError: Expected all tensors to be on the same device, but found at "
                "least two devices, mps:0 and cpu!",
                ["mps:0", "cpu"],
            ),
            # EleutherAI/lm-evaluation-harness issue 1131
            ("RuntimeError: Placeholder storage has not been allocated on MPS device!", ["MPS"]),
            # intel/intel-xpu-backend-for-triton pull 7053
            (
                "RuntimeError: Expected all tensors to be on the same device, but found at "
                "least two devices, xpu:0 and cpu!",
                ["xpu:0", "cpu"],
            ),
            # pytorch/xla issue 8568 (xla is no device this suite names)
            ("RuntimeError: Tensor on device meta is not on the expected device xla:0!", ["meta"]),
            # Comfy-Org/ComfyUI issue 9529 (cut after its first sentences)
            (
                "HIP out of memory. Tried to allocate 432.00 MiB. GPU 0 has a total capacity of "
                "15.92 GiB of which 7.12 GiB is free.",
                ["HIP", "GPU"],
            ),
            # pytorch/pytorch issue 159745 (c10/core/Device.cpp): bare xpu, hip and mps, no index
            (
                "RuntimeError: Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, "
                "ideep, hip, ve, fpga, ort, xla, lazy, vulkan, mps, meta, hpu, mtia, "
                "privateuseone device type at start of device string: h",
                ["cpu", "cuda", "xpu", "hip", "mps", "meta"],
            ),
        ]
        for message, devices in cases:
            with self.subTest(message=message):
                self.check(message, devices=devices)

    def test_the_backend_and_the_sims_device(self):
        # yatengLG/Focal-Loss-Pytorch issue 17
        self.check(
            "Expected object of backend CPU but got backend CUDA for argument #3 'index'",
            "index",
            devices=["CPU", "CUDA"],
        )
        # corpus.json, cell:unregistered_buffers/check=to_device/variant=plain_member/device=sim:0
        self.check(
            "Expected all tensors to be on the same device, but found at least two devices, "
            "sim:0 and cpu! (when checking argument for argument mat2 in method "
            "wrapper_SIM_mm_out)",
            "mat2",
            "wrapper_SIM_mm_out",
            ["sim:0", "cpu"],
        )

    def test_legacy_tensor_types_name_a_device_and_a_dtype(self):
        # leeyeehoo/CSRNet-pytorch issue 3: torch.cuda.FloatTensor is on the GPU, Float
        self.check(
            "RuntimeError: Expected object of type torch.cuda.FloatTensor but found type "
            "torch.FloatTensor for argument #3 'other'",
            "other",
            devices=["cuda", "cpu"],
            dtypes=["Float"],
        )
        # pytorch/xla issue 899
        self.check(
            "Input tensor is not an XLA tensor: torch.LongTensor", devices=["cpu"], dtypes=["Long"]
        )

    def test_each_way_of_naming_a_dtype(self):
        cases = [
            # corpus.json, cell:unregistered_buffers/check=to_float64/variant=plain_member
            ("expected scalar type Double but found Float", ["Double", "Float"]),
            # OpenBMB/MiniCPM-V issue 234
            (
                "RuntimeError: mat1 and mat2 must have the same dtype, but got Float and Half",
                ["Float", "Half"],
            ),
            # mosaicml/llm-foundry issue 333
            ("RuntimeError: expected scalar type BFloat16 but found Float", ["BFloat16", "Float"]),
            # corpus.json, probe:cross_entropy_int_targets
            ("expected scalar type Long but found Int", ["Long", "Int"]),
            # ericyeats/cvnn-security issue 1
            (
                "RuntimeError: expected scalar type ComplexFloat but found Float",
                ["ComplexFloat", "Float"],
            ),
            # Vaibhavs10/fast-whisper-finetuning issue 14
            (
                "RuntimeError: expected mat1 and mat2 to have the same dtype, but got: c10::Half "
                "!= float",
                ["Half", "float"],
            ),
            # stefanch/sGDML issue 25
            ("RuntimeError: expected scalar type Double but found Char", ["Double", "Char"]),
            # huggingface/accelerate issue 3295 (ProcessGroupNCCL.cpp getNcclDataType)
            ("Input tensor data type is not supported for NCCL process group: Short", ["Short"]),
            # pytorch/pytorch issue 48519
            ("RuntimeError: \"diag\" not implemented for 'ComplexDouble'", ["ComplexDouble"]),
        ]
        for message, dtypes in cases:
            with self.subTest(message=message):
                self.check(message, dtypes=dtypes)
        # pytorch/pytorch issue 22992 (1.2's masked_select)
        self.check(
            "RuntimeError: Expected object of scalar type Byte but got scalar type Bool for "
            "argument #2 'mask'",
            "mask",
            dtypes=["Byte", "Bool"],
        )
        # corpus.json, probe:single_op_conv_float64: convolution's type check names the bias
        self.check(
            "Input type (float) and bias type (double) should be the same",
            "bias",
            dtypes=["float", "double"],
        )

    def test_a_device_named_twice_is_listed_once(self):
        # pytorch/pytorch issue 9869 (1.x's Variable types): two FloatTensors, two devices
        self.check(
            "RuntimeError: Expected object of type Variable[torch.FloatTensor] but found type "
            "Variable[torch.cuda.FloatTensor] for argument #1 'mat2'",
            "mat2",
            devices=["cpu", "cuda"],
            dtypes=["Float"],
        )

    def test_only_the_first_line_is_read(self):
        # The TorchScript wrapper (the cxx_torchscript_cpu_only log): its first line names
        # nothing; the lines below name CUDA, cuda:0 and a traceback's "in forward".
        logs = json.loads(FIXTURES.read_text(encoding="utf-8"))["logs"]
        text = next(log["text"] for log in logs if log["name"] == "cxx_torchscript_cpu_only")
        message = text[text.index("The following operation") :]
        self.assertIn("cuda:0", message)
        self.check(message)


if __name__ == "__main__":
    unittest.main()
