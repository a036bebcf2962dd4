#!/usr/bin/env python3
"""torchplace.schema's writers, in process in a scratch folder: encode (a lone surrogate escaped),
write_atomically (the content, a mode that follows the umask, no temporary file or half-written
target left when the write fails or is stopped), _current_umask, write_set (stale files removed,
the verdict written last, a SIGTERM during the set dropped, SIGTERM ignored after),
remove_outputs and to_devnull. The files written are synthetic.

  test_schema_write.py [CLASS]      (CTest: report.schema_write)
"""
import io
import os
import signal
import unittest
from unittest import mock

from schema_cases import SchemaCase
from torchplace import schema


class Write(SchemaCase):
    def umask(self, mask: int) -> None:
        self.addCleanup(os.umask, os.umask(mask))

    def read(self, name: str) -> bytes:
        with open(self.path(name), "rb") as handle:
            return handle.read()

    def leftovers(self) -> list:
        return [name for name in os.listdir(self.dir) if name.startswith(".tmp-")]

    def test_encode(self) -> None:
        self.assertEqual(schema.encode("\u00e9"), b"\xc3\xa9")
        self.assertEqual(schema.encode('"\ud800"'), b'"\\ud800"')  # a lone surrogate
        data = b"\xff"
        self.assertIs(schema.encode(data), data)

    def test_content_replaces_the_old_file(self) -> None:
        path = self.write("out.txt", "old content, longer than the new")
        schema.write_atomically(path, "new \ud800")
        self.assertEqual(self.read("out.txt"), b"new \\ud800")
        schema.write_atomically(path, b"\x00bytes", "wb")
        self.assertEqual(self.read("out.txt"), b"\x00bytes")
        self.assertEqual(self.leftovers(), [])

    def test_the_mode_follows_the_umask(self) -> None:
        for mask, mode in ((0o022, 0o644), (0o077, 0o600), (0o002, 0o664)):
            self.umask(mask)
            schema.write_atomically(self.path("out.txt"), "x")
            self.assertEqual(os.stat(self.path("out.txt")).st_mode & 0o777, mode, oct(mask))

    def test_current_umask_leaves_it_as_it_was(self) -> None:
        self.umask(0o027)
        self.assertEqual(schema._current_umask(), 0o027)
        self.assertEqual(os.umask(0o027), 0o027)

    def test_a_failed_write_leaves_the_old_file_and_no_temporary(self) -> None:
        os.mkdir(self.path("folder"))  # a folder in the way: the rename fails
        self.write("folder/inside", "x")
        with self.assertRaises(OSError):
            schema.write_atomically(self.path("folder"), "new")
        self.assertEqual(self.leftovers(), [])
        path = self.write("out.txt", "old")
        stop = schema.Terminated("synthetic stop")
        with mock.patch.object(os, "replace", side_effect=stop), self.assertRaises(
            schema.Terminated
        ):
            schema.write_atomically(path, "new")
        self.assertEqual((self.read("out.txt"), self.leftovers()), (b"old", []))


class WriteSet(SchemaCase):
    def setUp(self) -> None:
        super().setUp()
        self.addCleanup(signal.signal, signal.SIGTERM, signal.getsignal(signal.SIGTERM))
        self.addCleanup(
            signal.pthread_sigmask, signal.SIG_SETMASK, signal.pthread_sigmask(signal.SIG_BLOCK, [])
        )
        self.signals: list = []
        signal.signal(signal.SIGTERM, lambda signum, _frame: self.signals.append(signum))

    def test_stale_files_go_and_the_last_is_written_last(self) -> None:
        out = self.path("a/b")
        os.makedirs(out)
        self.write("a/b/old.json", "stale")
        os.symlink(self.path("nowhere"), self.path("a/b/dangling"))
        files = {"z.txt": "z", "verdict.json": b"{}", "a.txt": "\ud800"}
        real = schema.write_atomically
        with mock.patch.object(schema, "write_atomically", wraps=real) as write:
            schema.write_set(out, files, "verdict.json", ("old.json", "dangling", "never"))
        order = [os.path.basename(call.args[0]) for call in write.call_args_list]
        self.assertEqual(order, ["a.txt", "z.txt", "verdict.json"])
        self.assertEqual(sorted(os.listdir(out)), ["a.txt", "verdict.json", "z.txt"])
        with open(os.path.join(out, "a.txt"), "rb") as handle:
            self.assertEqual(handle.read(), b"\\ud800")
        with open(os.path.join(out, "verdict.json"), "rb") as handle:
            self.assertEqual(handle.read(), b"{}")

    def test_a_sigterm_while_writing_is_dropped_and_later_ones_ignored(self) -> None:
        real = schema.write_atomically

        def killed_midway(path: str, data: bytes, mode: str) -> None:
            os.kill(os.getpid(), signal.SIGTERM)  # held back: the set is written whole
            real(path, data, mode)

        out = self.path("new")  # not there yet: made
        with mock.patch.object(schema, "write_atomically", side_effect=killed_midway):
            schema.write_set(out, {"one": "1", "two": "2"}, "two")
        self.assertEqual(sorted(os.listdir(out)), ["one", "two"])
        self.assertEqual(self.signals, [])
        self.assertIs(signal.getsignal(signal.SIGTERM), signal.SIG_IGN)
        self.assertNotIn(signal.SIGTERM, signal.pthread_sigmask(signal.SIG_BLOCK, []))
        schema.write_set(out, {"one": "again"}, "one")  # the folder exists: fine
        with open(os.path.join(out, "one"), encoding="utf-8") as handle:
            self.assertEqual(handle.read(), "again")

    def test_remove_outputs(self) -> None:
        self.write("verdict.json", "old")
        os.symlink(self.path("nowhere"), self.path("dangling"))
        schema.remove_outputs(self.dir, ["verdict.json", "dangling", "never"])
        self.assertEqual(os.listdir(self.dir), [])
        os.mkdir(self.path("folder"))
        with self.assertRaises(OSError):  # one that cannot be removed
            schema.remove_outputs(self.dir, ["folder"])


class DevNull(SchemaCase):
    def test_the_stream_writes_to_devnull_after(self) -> None:
        with open(self.path("out.txt"), "w", encoding="utf-8") as stream:
            schema.to_devnull(stream)
            stream.write("lost")
            stream.flush()
            self.assertTrue(os.path.samestat(os.fstat(stream.fileno()), os.stat(os.devnull)))
        self.assertEqual(os.path.getsize(self.path("out.txt")), 0)
        schema.to_devnull(io.StringIO())  # no descriptor: nothing to do, no error


if __name__ == "__main__":
    unittest.main()
