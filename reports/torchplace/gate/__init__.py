"""The CI regression gate: behaviour (results.json against ci/gate/expectations.json) and speed
(two Google Benchmark runs under ci/gate/policy.json). Standard library only, except the speed
statistics (scipy). Entry points: python3 -m torchplace.gate (cli), torchplace.gate.calibrate,
torchplace.gate.interleave."""
