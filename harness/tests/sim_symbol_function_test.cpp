// The function a symbol names, as the sim's "where it happened" prints it (symbolize.cpp,
// symbol_function): the demangled name less its parameters and return type. The mangled names
// are written here (synthetic), each as g++ mangles it; c++filt gives the demangling in each
// comment.
#include <gtest/gtest.h>

#include "sim/sim_internal.h"

namespace sim_symbol_function_test {  // unity-built with the other harness tests
namespace {

using tp::sim::detail::symbol_function;

TEST(SimSymbolFunction, ANameLessItsParametersAndReturnType) {
  // toy::train_step(at::Tensor const&)
  EXPECT_EQ(symbol_function("_ZN3toy10train_stepERKN2at6TensorE"), "toy::train_step");
  // float at::Tensor::item<float>() const
  EXPECT_EQ(symbol_function("_ZNK2at6Tensor4itemIfEET_v"), "at::Tensor::item<float>");
  // void toy::run<std::function<void (int)> >(std::function<void (int)>): the parameters' own
  // parentheses and the template argument's space are not where the name ends or starts
  EXPECT_EQ(symbol_function("_ZN3toy3runISt8functionIFviEEEEvT_"),
            "toy::run<std::function<void (int)> >");
}

TEST(SimSymbolFunction, AnonymousNamespacesKeepTheirParentheses) {
  // (anonymous namespace)::f()
  EXPECT_EQ(symbol_function("_ZN12_GLOBAL__N_11fEv"), "(anonymous namespace)::f");
  // (anonymous namespace)::Foo<int> (anonymous namespace)::make<int>(): the return type ends at
  // the last space outside parentheses and angle brackets
  EXPECT_EQ(symbol_function("_ZN12_GLOBAL__N_14makeIiEENS_3FooIT_EEv"),
            "(anonymous namespace)::make<int>");
}

TEST(SimSymbolFunction, CNamesAndWhatDoesNotDemangleStayAsTheyAre) {
  EXPECT_EQ(symbol_function(nullptr), "");
  EXPECT_EQ(symbol_function("main"), "main");
  EXPECT_EQ(symbol_function("_start"), "_start");
}

}  // namespace
}  // namespace sim_symbol_function_test
