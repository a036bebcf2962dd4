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
SIM = HERE / "harness" / "sim"


def sim_extension():
    from torch.utils.cpp_extension import CppExtension  # torch: the environment's own

    sources = [str(SIM / line.strip()) for line in (SIM / "sources.txt").read_text().split()]
    return CppExtension(
        "torchplace.sim.libtorchplace_sim_python",
        sources + [str(SIM / "python_entry.cpp")],
        include_dirs=[str(SIM)],
        extra_compile_args=["-O2", "-Wall", "-Wextra"],
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


setup(ext_modules=[sim_extension()], cmdclass={"build_ext": BuildSim.command()})
