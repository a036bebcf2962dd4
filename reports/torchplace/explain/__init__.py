"""torchplace explain: finds each LibTorch error in one message or a whole log (a CI log, a Python
traceback, a C++ program's output, this suite's own output), from a file or stdin, and says for
each: its error class, the message family and the LibTorch versions that word it so, the argument
and the devices or dtypes it names, which tensor is on which device (in the message's own order:
placement.py), and the scenario and fix of this suite that cover it.

usage: python3 -m torchplace.explain [--json] [FILE | -]      (ci/torchplace explain ...)

The classification is the suite's one classifier, tp::classify (harness/message_families.cpp),
run as the program torchplace_classify: found through $TORCHPLACE_CLASSIFY, else beside the
installed package (share/torchplace/bin/). This package only finds the messages and presents them.

exit: 0 every error found was classified; 1 an error was found that no family knows (printed);
3 no LibTorch error found (a line that no family knows and no exception name starts is no error:
"all good, 12 tests passed"), unreadable input or no classifier; 64 bad arguments.
"""
