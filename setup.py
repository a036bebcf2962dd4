"""`python3 -m pip install --no-build-isolation .`: the Python package torchplace (reports/torchplace)
with the sim built against the torch already installed in this environment.

The sim (harness/sim/, its sources in sources.txt there, which CMake reads too) is built with
torch's C++ extension conventions rather than CMake: a CUDA build of torch's CMake package asks
for a CUDA toolkit even for CPU code, and torch.utils.cpp_extension needs none. It becomes
torchplace/sim/libtorchplace_sim_python.so, which torchplace.sim loads with ctypes.
"""
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
SIM = Path("harness") / "sim"  # relative: setuptools refuses absolute source paths in a wheel
# The C entry points, and the classifier they call (harness/classifier_sources.txt, which CMake's
# torchplace_sim_python reads too).
PYTHON_ENTRY = [SIM / "python_entry.cpp", SIM / "python_classify.cpp"] + [
    Path("harness") / name.strip()
    for name in (HERE / "harness" / "classifier_sources.txt").read_text().split()
]


def standard():
    """torch's BuildExtension adds its own -std unless one is given: 1.13's is C++14, and the
    classifier's headers need C++17 (as CMake builds them); 2.x's (C++17, then C++20) stand."""
    import torch

    return ["-std=c++17"] if int(torch.__version__.split(".")[0]) < 2 else []


def sim_extension():
    from torch.utils.cpp_extension import CppExtension  # torch: the environment's own

    listed = (HERE / SIM / "sources.txt").read_text().split()
    sources = [str(SIM / line.strip()) for line in listed]
    return CppExtension(
        "torchplace.sim.libtorchplace_sim_python",
        sources + [str(path) for path in PYTHON_ENTRY],
        include_dirs=[str(HERE / SIM), str(HERE / "harness")],
        extra_compile_args=standard() + ["-O2", "-g0", "-Wall", "-Wextra"],  # -g0: faster
        # only the C entry points exported (harness/sim/python_exports.map says why)
        extra_link_args=[f"-Wl,--version-script={HERE / SIM / 'python_exports.map'}"],
    )


class BuildSim:
    """build_ext that names the library as torchplace.sim looks for it (no Python ABI tag)."""

    @staticmethod
    def command():
        from torch.utils.cpp_extension import BuildExtension

        class Build(BuildExtension):
            def get_ext_filename(self, name):
                return str(Path(*name.split("."))) + ".so"

        return Build


def build_base():
    """A build folder per torch: objects built against one torch's headers are never reused for
    another's (a 2.x object in a 1.13 build: "undefined symbol ...decref_pyobject")."""
    import torch

    return str(Path("build") / f"setup-torch-{torch.__version__}")


setup(
    ext_modules=[sim_extension()],
    cmdclass={"build_ext": BuildSim.command()},
    options={"build": {"build_base": build_base()}},
)
