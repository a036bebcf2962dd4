// Code without debug information, for sim_where_frames_test.cpp: built with -g0 in every preset.
namespace sim_where_test {

__attribute__((noinline)) int no_debug_function(int value) { return value * 3 + 1; }

}  // namespace sim_where_test
