"""A synthetic repository for the docs lint's tests (test_docs_checks.py, test_docs_run.py):
FILES, written afresh to a temporary directory for each test by Synthetic. Every file is made up.
"""
import os
import shutil
import tempfile
import unittest
from typing import Dict

import docs

EXAMPLES = "harness/tests/docs_examples_test.cpp"
# A document with a right and a wrong block of each kind: GUIDE_SAYS names the wrong ones.
GUIDE = """# Guide

<!-- snippet: excerpt src/lib.cpp -->
```cpp
int thrice(int x) { return 3 * x; }
```

<!-- snippet: excerpt src/orphan.cpp -->
```cpp
int orphan() { return 0; }
```

<!-- snippet: downstream quickstart -->
```cpp
int main() {}
```

<!-- snippet: downstream missing_one -->
```cpp
int main() { return 1; }
```

<!-- snippet: not compiled: needs a GPU -->
```cpp
cudaDeviceSynchronize();
```

```c++
int unmarked;
```

```bash
echo not C++
```
"""
# The synthetic repository: two CMakeLists.txt (one names lib.cpp and blank.cpp, one the examples
# file), a source nobody compiles, an empty one, the downstream script, headers with examples.
FILES: Dict[str, str] = {
    "CMakeLists.txt": "add_library(demo src/lib.cpp src/blank.cpp)\nadd_subdirectory(harness)\n",
    "harness/tests/CMakeLists.txt": "add_executable(docs_examples_test docs_examples_test.cpp)\n",
    "src/lib.cpp": (
        "#include <vector>\n\nint twice(int x) {\n  return 2 * x;\n}\n\n"
        "int thrice(int x) { return 3 * x; }\n"
    ),
    "src/orphan.cpp": "int orphan() { return 0; }\n",
    "src/empty.cpp": "",
    "src/blank.cpp": "\n\n",
    "ci/downstream/check.sh": "snippet quickstart\n",
    EXAMPLES: (
        "void examples() {\n  auto a = twice(1);\n  auto b = thrice(2);  // six\n"
        "  first();\n  unrelated();\n  second();\n}\n"
    ),
    # Lines 4-5: an example compiled; 8: a diagram (no `;`); 11-13: two calls each compiled,
    # not one after the other; 16: an example nowhere, on the header's last line.
    "include/demo.h": (
        "// Demo: twice and thrice.\n//\n// Example:\n//   auto a = twice(1);\n"
        "//   auto b = thrice(2);  // six\n//\n// A diagram, not an example:\n"
        "//   twice -> thrice\nint twice(int x);\n// Two calls:\n//   first();\n//   \n"
        "//   second();\nint thrice(int x);\n// Never compiled:\n//   missing();\n"
    ),
    "docs/guide.md": GUIDE,
    "include/clean.h": "// An example:\n//   first();\nvoid first();\n",
}
CMAKE = ["CMakeLists.txt", "harness/tests/CMakeLists.txt"]
# What snippets() says of GUIDE: (is a fault, message).
GUIDE_SAYS = [
    (True, "9: no CMakeLists.txt names orphan.cpp: src/orphan.cpp is not compiled"),
    (True, "19: ci/downstream/check.sh does not build `snippet missing_one`"),
    (False, "docs/guide.md:24: not compiled: needs a GPU"),
    (True, "28: a C++ block without a <!-- snippet: ... --> marker above it"),
]


class Synthetic(unittest.TestCase):
    """A fresh copy of FILES (plus any given) in a temporary directory for each test."""

    def setUp(self) -> None:
        self.root = tempfile.mkdtemp(prefix="docs-lint-")
        self.addCleanup(shutil.rmtree, self.root)
        self.write(FILES)

    def write(self, files: Dict[str, str]) -> None:
        for path, text in files.items():
            full = os.path.join(self.root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as handle:
                handle.write(text)

    def repo(self) -> docs.Repo:
        return docs.Repo(self.root, CMAKE)
