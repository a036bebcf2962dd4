"""`run --gpu`: the suite on a GPU machine with a CUDA LibTorch and no package manager (a
self-hosted runner, the lent H200), installing nothing; with --budget-s, within a time budget.

Steps, most valuable first: build, scenarios (every cell), cuda_tests (CTest's "cuda" label),
probe (the message probe), bench (the headline benchmarks), report, bench_rest (every other
benchmark, merged into bench.json), tests (the rest of CTest). Then the behaviour gate, requiring
TORCHPLACE_REQUIRE_GPUS CUDA devices (default 1) in the run's fingerprint.

LibTorch: Torch_DIR or CMAKE_PREFIX_PATH if set, else the pip torch of `python3` on PATH
(torch.utils.cmake_prefix_path, asked through python3 -m torchplace.torch_info). GoogleTest,
Google Benchmark and nlohmann-json: a prefix in CMAKE_PREFIX_PATH, or .deps/usr made by
ci/gpu/prepare-deps.sh. A CUDA LibTorch's CMake config needs nvcc (CUDACXX, /usr/local/cuda or
PATH) of the CUDA release (major.minor) python3's torch was built for, when that torch is the
LibTorch used. TORCHPLACE_GPU_STEP, when set, runs each step as `$TORCHPLACE_GPU_STEP STEP OUT`
instead (the tests' fake).
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, List, Optional

from torchplace import bench_json, schema
from torchplace.command import common, steps
from torchplace.command.common import die, log
from torchplace.command.steps import Step, run_process

if TYPE_CHECKING:
    from torchplace.command.run import Options

# The headline rows the README's GPU figures come from (a --benchmark_filter regex).
REDUCED = "^(transfer/.*/bytes:(67108864|268435456)/|prefetch_overlap/)"
STEPS = ("build", "scenarios", "cuda_tests", "probe", "bench", "report", "bench_rest", "tests")


def prepare_environment() -> None:
    os.environ["TORCHPLACE_NO_INSTALL"] = "1"
    os.environ.setdefault("TORCHPLACE_BUILD_DIR", "/tmp/torchplace-build")


def torch_info(what: str) -> str:
    """The pip torch of `python3` on PATH (not this command's Python): its CMake prefix or CUDA
    release; "" when there is none."""
    python = shutil.which("python3")
    if python is None:
        return ""
    done = subprocess.run(
        [python, "-m", "torchplace.torch_info", what],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    return done.stdout.strip() if done.returncode == 0 else ""


def find_libtorch() -> None:
    """The pip torch's CMake prefix, unless the caller named a LibTorch."""
    if os.environ.get("Torch_DIR") or os.environ.get("CMAKE_PREFIX_PATH"):
        return
    prefix = torch_info("cmake_prefix_path")
    if not prefix:
        die(
            schema.EXIT_ENV,
            "no LibTorch: set Torch_DIR or CMAKE_PREFIX_PATH, or install a pip torch for python3",
        )
    os.environ["CMAKE_PREFIX_PATH"] = prefix


def major_minor(text: str) -> str:
    """major.minor of a version text ("13.0", "release 12.4, V12.4.131"), or ""."""
    found = re.search(r"[0-9]+\.[0-9]+", text)
    return found.group(0) if found else ""


def nvcc_release(nvcc: str) -> str:
    done = subprocess.run([nvcc, "--version"], capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if "release" in line.lower()]
    return major_minor(lines[0]) if lines else ""


def toolkit_args(nvcc: str, torch_is_cuda: bool) -> str:
    """CMake's view of the toolkit `nvcc` belongs to (not the folder of a wrapper on PATH); where
    that toolkit lacks the CUDA libraries' headers or libnvrtc (one assembled from pip's nvidia-*
    wheels), those the CUDA torch's wheels installed: ATen/cuda includes cusparse.h, and Caffe2's
    cuda.cmake links libnvrtc."""
    toolkit = Path(nvcc).resolve().parent.parent
    args = f"-DCMAKE_CUDA_COMPILER={nvcc} -DCUDA_TOOLKIT_ROOT_DIR={toolkit}"
    if not torch_is_cuda:
        return args
    headers = ("include", "targets/x86_64-linux/include")
    if not any((toolkit / folder / "cusparse.h").is_file() for folder in headers):
        include = torch_info("cuda_include")
        print(f"cusparse.h: not in {toolkit}; {include or 'python3 torch ships none either'}")
        if include:  # gcc and nvcc search CPATH's folders as -I
            os.environ["CPATH"] = os.pathsep.join(filter(None, [os.environ.get("CPATH"), include]))
    folders = ("lib64", "lib", "targets/x86_64-linux/lib")
    if any(any((toolkit / folder).glob("libnvrtc.so*")) for folder in folders):
        return args
    nvrtc = torch_info("nvrtc")
    print(f"nvrtc: {toolkit} has none; {nvrtc or 'python3 torch ships none either'}")
    return f"{args} -DCUDA_nvrtc_LIBRARY={nvrtc}" if nvrtc else args


def find_nvcc() -> None:
    """A CUDA pip torch needs nvcc at configure time, of the CUDA release that torch was built
    for: another one (a 12.x toolkit beside a 13.x wheel) links a second CUDA runtime. Say so
    before CMake fails obscurely or builds a mix."""
    cuda = torch_info("cuda")
    prefix = torch_info("cmake_prefix_path")
    named = f"{os.environ.get('Torch_DIR', '')};{os.environ.get('CMAKE_PREFIX_PATH', '')}"
    if cuda and prefix not in named:
        print("nvcc: the LibTorch used is not python3's torch: its CUDA release is not compared")
        cuda = ""
    cudacxx = os.environ.get("CUDACXX", "")
    seen = ""
    for nvcc in (cudacxx, "/usr/local/cuda/bin/nvcc", shutil.which("nvcc") or ""):
        if not nvcc or not os.access(nvcc, os.X_OK):
            continue
        release = nvcc_release(nvcc)
        if cuda and release != major_minor(cuda):
            seen += f" {nvcc} (CUDA {release or 'unknown'})"
            if nvcc != cudacxx:
                continue
            die(
                schema.EXIT_ENV,
                f"CUDACXX={nvcc} is CUDA {release or 'of an unknown release'}, but python3's "
                f"torch is built for CUDA {cuda}: a second CUDA runtime would be linked; point "
                f"CUDACXX at a {cuda} toolkit",
            )
        extra = os.environ.get("TORCHPLACE_CMAKE_ARGS", "")
        os.environ["TORCHPLACE_CMAKE_ARGS"] = f"{extra} {toolkit_args(nvcc, bool(cuda))}"
        print(
            f"nvcc: {nvcc}, CUDA {release or 'unknown'} (python3's torch: CUDA "
            f"{cuda or 'none or absent'})"
        )
        return
    if seen:
        die(
            schema.EXIT_ENV,
            f"python3's torch is built for CUDA {cuda}, and no nvcc of that release was "
            f"found:{seen}; set CUDACXX to a CUDA {cuda} nvcc",
        )
    if cuda:
        die(
            schema.EXIT_ENV,
            f"this torch is built for CUDA {cuda} and its CMake config needs the CUDA toolkit: "
            "no nvcc in CUDACXX, /usr/local/cuda/bin or PATH",
        )


def version_key(text: str) -> List[int]:
    return [int(part) for part in re.findall(r"[0-9]+", text)]


def check_deps_runtime(deps: Path) -> None:
    """.deps holds Debian 12's Google Benchmark, built against the libstdc++ of gcc 12: a machine
    whose libstdc++ is older cannot load it. Say so now, not after the build."""
    libraries = sorted(deps.glob("usr/lib/*/libbenchmark.so.*.*"))
    if not libraries:
        return
    needed = set(re.findall(rb"GLIBCXX_[0-9.]*[0-9]", libraries[0].read_bytes()))
    compiler = shutil.which("c++")
    if not needed or compiler is None:
        return
    done = subprocess.run([compiler, "-print-file-name=libstdc++.so.6"], capture_output=True)
    libstdcxx = Path(done.stdout.decode().strip())
    if not libstdcxx.is_file():
        return
    newest = max(needed, key=lambda name: version_key(name.decode()))
    if newest not in libstdcxx.read_bytes():
        die(
            schema.EXIT_ENV,
            f"{libraries[0]} needs {newest.decode()}, which this machine's {libstdcxx} lacks: "
            "run ci/gpu/prepare-deps.sh on a distribution no newer than this one",
        )


def preflight(out: Path) -> None:
    """LibTorch, .deps, nvcc and .deps' libstdc++ checked before any step (exit 3)."""
    find_libtorch()
    deps = common.root() / ".deps"
    if (deps / "usr").is_dir():
        prefix = os.environ.get("CMAKE_PREFIX_PATH", "")
        # the environment's CMAKE_PREFIX_PATH is a PATH-like list (':'), not a CMake list
        os.environ["CMAKE_PREFIX_PATH"] = os.pathsep.join(filter(None, [prefix, f"{deps}/usr"]))
    find_nvcc()
    check_deps_runtime(deps)
    if shutil.which("nvidia-smi"):
        query = ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv"]
        done = subprocess.run(query, capture_output=True, text=True)
        (out / "gpu.csv").write_text(done.stdout, encoding="utf-8")
        print(done.stdout, end="")
    sys.stdout.flush()


def ctest_step(out: Path, name: str, args: List[str], log_file: Optional[IO[str]]) -> int:
    """CTest with `args`, its output in OUT/<name>.log and JUnit beside; any failure (CTest
    exits 8) is this step's 1."""
    build = str(common.build_dir())
    junit = "junit-cuda.xml" if name == "ctest-cuda" else "junit.xml"
    argv = ["ctest", "--test-dir", build, "-j", str(os.cpu_count() or 1), "--no-tests=error"]
    argv += ["--output-junit", str(out / junit), *args]
    with open(out / f"{name}.log", "w") as ctest_log:
        code = run_process(argv, ctest_log)
    lines = (out / f"{name}.log").read_text(errors="replace").splitlines()
    summary = [line for line in lines if re.search(r"tests passed|\(Failed\)|Not Run", line)]
    print("\n".join(summary[-15:]), file=log_file or sys.stderr)
    return schema.EXIT_OK if code == 0 else schema.EXIT_FAIL


def probe_step(out: Path, log_file: Optional[IO[str]]) -> int:
    """The raw messages of the CPU-observable mistakes (not in a plain build: built here)."""
    build = common.build_dir()
    target = ["cmake", "--build", str(build), "--target", "torchplace_message_probe"]
    code = run_process(target, log_file)
    if code == 0:
        probe = [str(build / "ci" / "torchplace_message_probe"), str(out / "messages.json")]
        code = run_process(probe, log_file)
    return code


def bench_rest_step(options: "Options", log_file: Optional[IO[str]]) -> int:
    """Every other benchmark, then appended to bench.json."""
    from torchplace.command import run

    bench = common.build_dir() / "scenarios" / "torchplace_bench"
    code = run.bench_step(bench, options, "bench-rest", f"-{REDUCED}", log_file)
    rest = options.out / "bench-rest.json"
    if rest.is_file():
        try:
            bench_json.merge(str(options.out / "bench.json"), str(rest))
        except (OSError, ValueError, KeyError, TypeError) as error:
            log(f"cannot merge {rest} into bench.json: {error}")
            return schema.EXIT_FAIL  # the benchmarks wrote what cannot be merged
    return code


def plan(options: "Options") -> List[Step]:
    """The steps in STEPS' order; each through TORCHPLACE_GPU_STEP when that is set."""
    from torchplace.command import run

    out = options.out
    hook = os.environ.get("TORCHPLACE_GPU_STEP")
    if hook:
        return [Step(name, _hooked(hook, name, out), name == "build") for name in STEPS]
    build = common.build_dir()
    bench = build / "scenarios" / "torchplace_bench"
    actions = {
        "build": lambda log_file: run.build_step(out, log_file),
        "scenarios": lambda log_file: run.scenarios_step(
            build / "scenarios" / "torchplace_scenarios", out, log_file
        ),
        "cuda_tests": lambda log_file: ctest_step(out, "ctest-cuda", ["-L", "cuda"], log_file),
        "probe": lambda log_file: probe_step(out, log_file),
        "bench": lambda log_file: run.bench_step(bench, options, "bench", REDUCED, log_file),
        "report": lambda log_file: run.report_step(out, log_file),
        "bench_rest": lambda log_file: bench_rest_step(options, log_file),
        "tests": lambda log_file: ctest_step(
            out, "ctest", ["-LE", "bench|cuda|mutation"], log_file
        ),
    }
    recorded = ("build", "scenarios", "bench", "report", "bench_rest")
    return [Step(name, actions[name], name == "build", records=name in recorded) for name in STEPS]


def _hooked(hook: str, name: str, out: Path) -> steps.Action:
    return lambda log_file: run_process([hook, name, str(out)], log_file)


def gate(out: Path, status: int) -> int:
    """The behaviour gate (standard library only: any python3 will do) on what ran, requiring
    the CUDA devices; a build or environment failure outranks it, it outranks a failed or cut
    step."""
    if not (out / "results.json").is_file():
        return status
    gpus = os.environ.get("TORCHPLACE_REQUIRE_GPUS", "1")
    argv = [sys.executable, "-m", "torchplace.gate", "--results", str(out)]
    argv += ["--require-devices", f"cuda={gpus}", "--out", str(out / "gate")]
    with open(out / "gate.log", "w") as gate_log:
        gate_status = common.call(argv, stdout=gate_log, stderr=gate_log)
    print("\n".join((out / "gate.log").read_text(errors="replace").splitlines()[:3]))
    steps.pack(out)
    if status in (schema.EXIT_ENV, schema.EXIT_BUILD) or gate_status == schema.EXIT_OK:
        return status
    return gate_status
