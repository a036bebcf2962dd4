#!/usr/bin/env python3
"""torchplace.sim_library without a built library: which file it loads (TORCHPLACE_SIM_LIBRARY,
else the one beside torchplace.sim), a missing file, a file that is no sim library and one built
for another torch refused by name before loading, one cut short (its ELF header says where it
ends), a library that will not load, and the loaded library's C entry points typed, kept and
used by classify. The libraries here are synthetic files holding only the version mark (and an
ELF header); ctypes.CDLL is a stand-in."""
import ctypes
import os
import struct
import tempfile
import unittest
from pathlib import Path
from unittest import mock

import torch

from torchplace import sim_library
from torchplace.sim_library import SimUnavailable

MAJOR_MINOR = ".".join(torch.__version__.split(".")[:2])


class Entry:
    """A stand-in C function: records its calls, answers `answer`."""

    def __init__(self, answer=None):
        self.answer, self.calls = answer, []

    def __call__(self, *args):
        self.calls.append(args)
        return self.answer


class LibraryFile(unittest.TestCase):
    def setUp(self):
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.path = Path(scratch.name) / sim_library.LIBRARY_NAME
        environ = mock.patch.dict(os.environ, {"TORCHPLACE_SIM_LIBRARY": str(self.path)})
        environ.start()
        self.addCleanup(environ.stop)
        kept = sim_library._library
        sim_library._library = None
        self.addCleanup(setattr, sim_library, "_library", kept)

    def write(self, version):
        self.path.write_bytes(b"\x7fELF\0torchplace-sim-torch-version=" + version + b";\0")


class WhichFile(LibraryFile):
    def test_the_named_one(self):
        self.write(b"1.0")
        self.assertEqual(sim_library.library_path(), self.path)

    def test_a_missing_one_is_refused_by_name(self):
        with self.assertRaises(SimUnavailable) as refused:
            sim_library.library_path()
        self.assertIn(f"no sim library at {self.path} ", str(refused.exception))
        self.assertIn(f"against this torch, {torch.__version__},", str(refused.exception))

    def test_else_the_one_beside_torchplace_sim(self):
        del os.environ["TORCHPLACE_SIM_LIBRARY"]
        beside = Path(sim_library.__file__).parent / "sim" / sim_library.LIBRARY_NAME
        with mock.patch.object(Path, "is_file", lambda path: path == beside):
            self.assertEqual(sim_library.library_path(), beside)


class Version(LibraryFile):
    def test_the_version_it_was_built_for(self):
        self.write(b"2.11.0+cu128")
        self.assertEqual(sim_library.built_for(self.path), "2.11.0+cu128")

    def test_a_file_without_the_mark_is_no_sim_library(self):
        self.path.write_bytes(b"\x7fELF\0torchplace-sim-torch-version=;\0")
        with self.assertRaises(SimUnavailable) as refused:
            sim_library.built_for(self.path)
        self.assertIn(f"{self.path} is not a torchplace sim library", str(refused.exception))

    def test_another_patch_release_is_accepted(self):
        self.write(MAJOR_MINOR.encode() + b".99")
        sim_library._check_version(self.path, self.path.read_bytes())

    def test_another_minor_release_is_refused_before_loading(self):
        major, minor = MAJOR_MINOR.split(".")
        other = f"{major}.{int(minor) + 1}.0"
        self.write(other.encode())
        with mock.patch.object(ctypes, "CDLL") as cdll, self.assertRaises(SimUnavailable) as no:
            sim_library.load()
        cdll.assert_not_called()
        self.assertIn(f"built against LibTorch {other}, but this torch is", str(no.exception))


def elf_header(shoff, shnum, segment=(0, 0)):
    """A synthetic ELF-64 header (no code): section headers of 64 bytes at `shoff`, and one
    PT_LOAD program header right after it (56 bytes) for the (offset, size) `segment`."""
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<QQ", header, 0x20, 64, shoff)
    struct.pack_into("<HHHH", header, 0x36, 56, 1, 64, shnum)
    return bytes(header) + struct.pack("<IIQQQQQQ", 1, 5, segment[0], 0, 0, segment[1], 0, 0)


class Whole(LibraryFile):
    def write_elf(self, shoff, shnum, size, segment=(0, 0)):
        head = elf_header(shoff, shnum, segment)
        mark = b"torchplace-sim-torch-version=" + MAJOR_MINOR.encode() + b".0;"
        self.path.write_bytes((head + mark).ljust(size, b"\0"))

    def test_the_end_its_header_gives(self):
        self.write_elf(shoff=1000, shnum=3, size=1192, segment=(0, 1100))
        self.assertEqual(sim_library.elf_end(self.path.read_bytes()), 1192)
        self.write_elf(shoff=1000, shnum=3, size=1192, segment=(600, 700))
        self.assertEqual(sim_library.elf_end(self.path.read_bytes()), 1300)
        self.assertEqual(sim_library.elf_end(b"\x7fELF\x01\x01" + bytes(100)), 0)  # ELF-32

    def test_loading_reads_the_file_once_for_both_checks(self):
        self.write_elf(shoff=1000, shnum=3, size=1192)
        read = Path.read_bytes
        with mock.patch.object(ctypes, "CDLL"), mock.patch.object(
            Path, "read_bytes", autospec=True, side_effect=read
        ) as reads:
            sim_library.load()
        self.assertEqual([call.args[0] for call in reads.call_args_list], [self.path])

    def test_a_library_cut_short_is_refused_before_loading(self):
        self.write_elf(shoff=1000, shnum=3, size=1191)
        with mock.patch.object(ctypes, "CDLL") as cdll, self.assertRaises(SimUnavailable) as no:
            sim_library.load()
        cdll.assert_not_called()
        self.assertEqual(
            str(no.exception),
            f"torchplace.sim: cannot load {self.path}: cut short, 1191 bytes where its ELF "
            "header says 1192",
        )

    def test_a_segment_past_the_end_is_cut_short_too(self):
        self.write_elf(shoff=200, shnum=1, size=300, segment=(0, 301))
        with mock.patch.object(ctypes, "CDLL"), self.assertRaises(SimUnavailable) as no:
            sim_library.load()
        self.assertIn("cut short, 300 bytes where its ELF header says 301", str(no.exception))

    def test_program_headers_past_the_end(self):
        data = elf_header(shoff=0, shnum=0)[:100]
        self.assertEqual(sim_library.elf_end(data), 120)
        # the program header one byte short: its end; whole, at the file's end: the segment's
        self.assertEqual(sim_library.elf_end(elf_header(0, 0, (0, 100))[:119]), 120)
        self.assertEqual(sim_library.elf_end(elf_header(0, 0, (0, 100))), 100)

    def test_only_a_whole_elf_64_header_is_read(self):
        # shorter than its 64-byte header, or not ELF-64: nothing said (dlopen reads such a file
        # and refuses it; only mapped segments past the end kill the process)
        header = elf_header(shoff=64, shnum=1)[:64]  # no program header: phnum says 1
        self.assertEqual(sim_library.elf_end(header), 128)
        self.assertEqual(sim_library.elf_end(header[:63]), 0)
        self.assertEqual(sim_library.elf_end(b"short"), 0)
        self.assertEqual(sim_library.elf_end(bytes(100)), 0)

    def test_a_whole_one_loads(self):
        self.write_elf(shoff=1000, shnum=3, size=1192, segment=(0, 1192))
        with mock.patch.object(ctypes, "CDLL", return_value=mock.NonCallableMock()) as cdll:
            sim_library.load()
        cdll.assert_called_once()


class Load(LibraryFile):
    def test_a_library_that_will_not_load(self):
        self.write(MAJOR_MINOR.encode() + b".0")
        error = OSError("undefined symbol: _ZN3c10synthetic")
        with mock.patch.object(ctypes, "CDLL", side_effect=error):
            with self.assertRaises(SimUnavailable) as refused:
                sim_library.load()
        self.assertEqual(
            str(refused.exception), f"torchplace.sim: cannot load {self.path}: {error}"
        )
        self.assertIs(refused.exception.__cause__, error)
        self.assertIsNone(sim_library._library)

    def test_loaded_local_typed_once_and_classifying(self):
        self.write(MAJOR_MINOR.encode() + b".0")
        library = mock.NonCallableMock(torchplace_classify=Entry(b"DeviceMismatch"))
        with mock.patch.object(ctypes, "CDLL", return_value=library) as cdll:
            self.assertIs(sim_library.load(), library)
            self.assertEqual(sim_library.classify("Expected \udcff on cuda:0"), "DeviceMismatch")
        cdll.assert_called_once_with(str(self.path), mode=ctypes.RTLD_LOCAL)
        self.assertEqual(library.torchplace_classify.calls, [(b"Expected ? on cuda:0",)])
        self.assertEqual(library.torchplace_classify.restype, ctypes.c_char_p)
        self.assertEqual(library.torchplace_classify.argtypes, [ctypes.c_char_p])
        self.assertEqual(library.torchplace_sim_error.restype, ctypes.c_char_p)
        self.assertEqual(library.torchplace_sim_log_start.restype, ctypes.c_void_p)
        self.assertEqual(library.torchplace_sim_log_json.restype, ctypes.c_char_p)

    def test_a_loaded_library_is_kept_even_if_its_file_goes(self):
        sim_library._library = kept = mock.NonCallableMock()
        self.assertIs(sim_library.load(), kept)


if __name__ == "__main__":
    unittest.main()
