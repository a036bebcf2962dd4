"""`test` (build, then every CTest test) and `mutate` (torchplace.mutation): the two commands
that need the source tree to build."""

import os
import sys
from typing import List

from torchplace import schema
from torchplace.command import common
from torchplace.command.common import die

MUTATE_USAGE = (
    "usage: ci/torchplace mutate [--only NAME,...] [--list] [--no-install] | --generated "
    "[--sample SEED] [--budget-s N] [--lang cpp,py] [--files PATH,...] [--limit N] [--out FILE] "
    "[--in-tree BUILD_DIR] [--only ID,...] [--tests REGEX] [--write-ledger FILE] [--list] "
    "[--shard K/N] [--from-records FILE,...]"
)
MUTATE_VALUES = (
    "--only --sample --budget-s --lang --out --in-tree --files --limit --tests --write-ledger "
    "--shard --from-records"
).split()


def test(args: List[str]) -> int:
    for arg in args:
        if arg != "--no-install":
            die(
                schema.EXIT_USAGE,
                f"test: unknown argument '{arg}' (usage: ci/torchplace test [--no-install])",
            )
        os.environ["TORCHPLACE_NO_INSTALL"] = "1"
    if not common.no_install():
        # tp_ensure_deps $TP_CHECK_PACKAGES: the list has one home, ci/lib/common.sh.
        code = common.call(
            [
                "bash",
                "-c",
                'set -euo pipefail; source "$1"; tp_ensure_deps $TP_CHECK_PACKAGES',
                "_",
                str(common.root() / "ci" / "lib" / "common.sh"),
            ]
        )
        if code != 0:
            raise common.Exit(code)
    common.build()
    build = str(common.build_dir())
    ctest = ["ctest", "--test-dir", build, "-j", str(os.cpu_count() or 1), "--output-on-failure"]
    ctest += ["--no-tests=error", "--output-junit", f"{build}/junit.xml"]
    if common.call(ctest) != 0:
        return schema.EXIT_FAIL
    return schema.EXIT_OK


def mutate(args: List[str]) -> int:
    module = "torchplace.mutation"
    forwarded: List[str] = []
    while args:
        arg = args.pop(0)
        if arg == "--no-install":
            os.environ["TORCHPLACE_NO_INSTALL"] = "1"
        elif arg == "--list":
            forwarded.append(arg)
        elif arg == "--generated":
            module = "torchplace.mutation.generated"
        elif arg in MUTATE_VALUES:
            forwarded += [
                arg,
                common.take_value(args, f"mutate: {arg} needs a value ({MUTATE_USAGE})"),
            ]
        else:
            die(schema.EXIT_USAGE, f"mutate: unknown argument '{arg}' ({MUTATE_USAGE})")
    common.ensure_deps()
    return common.call([sys.executable, "-m", module, *forwarded])
