"""What a classified message names (argument, devices, dtypes) and which scenario and fix of this
suite cover it. Presentation only: the class comes from the classifier, never from here."""
import re
from typing import Any, Dict, List

from torchplace.explain.placement import indices_on_host, placement

README = 'README.md, section "What each scenario shows"'

ARGUMENT = [
    re.compile(p)
    for p in (
        r"for argument (\w+) in method",  # 1.9-2.7 wrapper check
        r"but got (\w+) is on",  # ~2.8+ wrapper check
        r"argument #\d+ '(\w+)'",  # checkSameGPU, 1.x TH bindings, checkSameType
        r"\b(weight|bias) type \(",  # convolution's type check
        r"Input and (hidden|parameter) tensors",  # RNN
        r"device type for (generator)",
        r"^(indices) should be",
        r"and (indices) must be",
        r"^(target) ",
    )
]
METHOD = re.compile(r"(?:in method|in call to|while checking arguments for) (\w+)")
DEVICE = re.compile(
    r"\b(cpu|CPU|cuda(?::\d+)?|CUDA|mps(?::\d+)?|MPS|xpu(?::\d+)?|meta|"
    r"sim:\d+|GPU|HIP|hip(?::\d+)?)\b"
)
LEGACY_TYPE = re.compile(r"\btorch\.(cuda\.)?([A-Z][a-z]*)Tensor\b")
DTYPE = re.compile(
    r"\b(Float|Double|Half|BFloat16|Long|Int|Short|Byte|Char|Bool|ComplexFloat|"
    r"ComplexDouble|float|double)\b|c10::(Half|BFloat16)"
)


def named(core: str) -> Dict[str, Any]:
    """The argument, method, devices and dtypes a message names (in the order it names them)."""
    first = core.split("\n", 1)[0]
    argument = next((m.group(1) for p in ARGUMENT for m in [p.search(first)] if m), None)
    method = METHOD.search(first)
    devices: List[str] = []
    dtypes: List[str] = []
    for cuda, scalar in LEGACY_TYPE.findall(first):
        devices.append("cuda" if cuda else "cpu")
        dtypes.append(scalar)
    devices += [d for d in DEVICE.findall(first)]
    dtypes += [a or b for a, b in DTYPE.findall(first)]
    return {
        "argument": argument,
        "method": method.group(1) if method else None,
        "devices": list(dict.fromkeys(devices)),
        "dtypes": list(dict.fromkeys(dtypes)),
        "where": placement(core),
    }


def _entry(scenario: str, fix: str, why: str) -> Dict[str, str]:
    path = f"scenarios/{scenario}.cpp" if scenario else ""
    return {"scenario": scenario, "scenario_file": path, "fix": fix, "why": why, "readme": README}


MOVE = (
    "tp::fixes::to_device (harness/fixes/batch_mover.h) moves a whole batch, targets too; or "
    "a module that moves its inputs to its parameters' device (harness/fixes/follow_parameters.h)"
)


def covered_by(error_class: str, core: str, names: Dict[str, Any]) -> List[Dict[str, str]]:
    """The scenarios (with their fix) of this suite that raise and fix this kind of error."""
    argument = (names.get("argument") or "").lower()
    devices = [str(d) for d in names.get("devices", [])]
    if error_class == "DeviceMismatch":
        gpus = {d for d in devices if re.fullmatch(r"cuda:\d+", d)}
        if len(gpus) > 1:
            return [
                _entry(
                    "multi_gpu",
                    "move the inputs to the model's first device, or "
                    "torch::nn::parallel::data_parallel",
                    "two GPUs named",
                )
            ]
        if argument in ("index", "indices") or "indices" in core.split("\n", 1)[0].lower():
            where = names.get("where") or []
            if not where or indices_on_host(where):
                return [_entry("cpu_indices", MOVE, "CPU indices into a weight on the device")]
            return [
                _entry(
                    "checkpoint_map_location",
                    "load the weight onto the indices' device: torch::load(module, path, "
                    "device), or module->to(device) after loading",
                    "a weight left on the CPU (a checkpoint loaded there, say) with indices "
                    "on the device",
                )
            ]
        if argument in ("target", "label", "labels"):
            return [_entry("forgotten_labels", MOVE, "targets left on the CPU")]
        return [
            _entry("forgotten_labels", MOVE, "an input or target left on another device"),
            _entry(
                "unregistered_buffers",
                "register the tensor as a buffer "
                "(register_buffer) so module.to(device) moves it",
                "a module member that module.to(device) does not move",
            ),
            _entry(
                "checkpoint_map_location",
                "torch::load(module, path, device) with the "
                "device the module's parameters are on",
                "a checkpoint mapped elsewhere",
            ),
        ]
    if error_class == "BackendUnavailable" and "torchplace.sim" in core:
        return [
            _entry(
                "",
                "build the target torchplace_sim_python against this torch and set "
                "TORCHPLACE_SIM_LIBRARY to it (harness/sim/README.md)",
                "the sim's library does not fit this torch",
            )
        ]
    if error_class == "BackendUnavailable":
        if "pin" in core.split("\n", 1)[0].lower() or "PinnedMemory" in core:
            return [
                _entry(
                    "pinned_non_blocking",
                    "pin only where CUDA is present " "(torch::cuda::is_available())",
                    "pinned memory needs the accelerator",
                )
            ]
        return [
            _entry(
                "checkpoint_map_location",
                "torch::load(module, path, torch::kCPU), or "
                "pick the device at run time: torch::cuda::is_available() ? kCUDA : kCPU",
                "a CUDA-tagged archive or a CUDA tensor on a host or build without CUDA",
            )
        ]
    if error_class == "DtypeMismatch":
        dtypes = [str(d).lower() for d in names.get("dtypes", [])]
        if {"half", "bfloat16"} & set(dtypes):
            return [
                _entry(
                    "amp",
                    "run the op under autocast, or cast the input to the "
                    "weight's dtype; scale fp16 losses (harness/fixes/grad_scaler.h)",
                    "a half-precision operand beside a float one",
                )
            ]
        if argument == "target" or {"long", "int"} & set(dtypes):
            return [
                _entry(
                    "forgotten_labels",
                    "class-index targets as torch::kLong",
                    "targets of the wrong integer dtype",
                )
            ]
        return [
            _entry(
                "unregistered_buffers",
                "register the tensor as a buffer so " "module.to(dtype) converts it too",
                "a member left in the old dtype",
            )
        ]
    if error_class in ("MissingKey", "FileNotFound", "CorruptArchive"):
        return [
            _entry(
                "checkpoint_map_location",
                "save and load the same module; check the "
                "path and the file's size against the saved one",
                "the checkpoint cases: missing key, missing file, truncated archive",
            )
        ]
    if error_class == "HostSync":
        return [
            _entry(
                "transfer_budget",
                "keep the value on the device inside the loop (no .item(), .cpu() or a host "
                "mask per step); read metrics once, after the loop",
                "a synchronizing CUDA operation under sync-debug's error mode",
            )
        ]
    if error_class in ("CollectiveTimeout", "CollectiveFailure"):
        return [
            _entry(
                "ddp",
                "read every rank's log for the first error: a peer that died, never joined "
                "or holds its batch on another device; give each rank its own device",
                "a collective whose peer failed or never joined",
            )
        ]
    if error_class == "OutOfMemory":
        return [
            _entry(
                "",
                "none in this suite: no scenario provokes an out-of-memory error",
                "outside this suite's scenarios",
            )
        ]
    return []
