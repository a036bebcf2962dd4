#!/bin/sh
# Mutation check for tp::sim's device check: with the check removed from the fallback
# (TORCHPLACE_SIM_MUTATION=no_device_check) the broken variants on sim:0 must go red; with it,
# green. Usage: mutation_check.sh SCENARIO_BINARY HARNESS_TEST_BINARY
# Exit: 0 the check is seen guarding, 1 the mutation went unnoticed or the clean run failed,
# 64 bad arguments.
[ $# -eq 2 ] && [ -x "$1" ] && [ -x "$2" ] || { echo "usage: $0 SCENARIO_BINARY HARNESS_TEST_BINARY" >&2; exit 64; }
scenarios=$1 harness=$2
cells='*variant=broken*device=sim0*:*variant=plain_member*device=sim0*:*variant=targets_on_cpu*device=sim0*'
status=0
run() {  # run NAME EXPECT(0|nonzero) COMMAND...
  name=$1 want=$2; shift 2
  "$@" >/dev/null 2>&1; got=$?
  if [ "$want" = 0 ] && [ $got -ne 0 ]; then echo "FAIL $name: clean run failed (exit $got)"; status=1
  elif [ "$want" != 0 ] && [ $got -eq 0 ]; then echo "FAIL $name: the mutation went unnoticed"; status=1
  else echo "ok   $name (exit $got)"; fi
}
run "broken variants on sim:0, check on" 0 "$scenarios" "--gtest_filter=$cells"
run "broken variants on sim:0, check off" 1 env TORCHPLACE_SIM_MUTATION=no_device_check \
  "$scenarios" "--gtest_filter=$cells"
run "user training step, check on" 0 "$harness" --gtest_filter='Sim.UserTrainingStep*'
run "user training step, check off" 1 env TORCHPLACE_SIM_MUTATION=no_device_check \
  "$harness" --gtest_filter='Sim.UserTrainingStep*'
exit $status
