"""The mutations `ci/torchplace mutate` applies, one at a time, to a scratch copy of the tree.

Each breaks one user-facing fix (or one guard of the harness) the way a careless edit would, and
names the CPU tests that must then fail. `old` must occur in `path` (after `anchor`, when given;
exactly once in the whole file otherwise); its first occurrence becomes `new`.
Kill sets: (binary, gtest filter); H is the harness tests, S the scenario cells.
"""
from typing import List, Optional, Tuple, TypedDict


Kill = Tuple[str, str]  # (binary, gtest filter)


class Mutation(TypedDict):
    name: str
    path: str
    old: str
    new: str
    kill: List[Kill]
    anchor: Optional[str]
    audit: bool


H = "torchplace_harness_tests"
S = "torchplace_scenarios"

BATCH_MOVER = "harness/fixes/batch_mover.h"
MAP_TENSORS = "harness/fixes/map_tensors.h"
FOLLOW = "harness/fixes/follow_parameters.h"
SCALER = "harness/fixes/grad_scaler.h"
PREFETCHER = "harness/fixes/prefetcher.h"
JUDGE = "harness/internal/expected_error.cpp"
NAMING = "harness/naming.cpp"
RUNNER = "harness/internal/cell_runner.cpp"
NUMERIC = "harness/numeric.h"
LABELS = "scenarios/forgotten_labels.cpp"
INDICES = "scenarios/cpu_indices.cpp"
BUFFERS = "scenarios/unregistered_buffers.cpp"
CHECKPOINT = "scenarios/checkpoint_map_location.cpp"
AMP = "scenarios/amp.cpp"
SIM = "harness/sim/sim.cpp"
SIM_FALLBACK = "harness/sim/fallback.cpp"
SIM_MEMORY = "harness/sim/guarded_memory.cpp"
SIM_CUDA_RULES = "harness/sim/cuda_rules.cpp"
SIM_DTYPES = "harness/sim/cuda_dtypes.cpp"
TORCHSCRIPT = "scenarios/torchscript_load.cpp"
SCENARIO_API = "harness/scenario.cpp"
DDP = "scenarios/ddp.cpp"
TRANSFER_LOG = "harness/sim/transfer_log.cpp"
BUDGET = "scenarios/transfer_budget.cpp"
SCALARS = "scenarios/scalar_operands.cpp"
SINGLE_OPS = "scenarios/single_op_checks.cpp"
TRAINING = "harness/training.h"


# The scenarios some of whose sim cells fail with sim_copies_to_cpu_off planted (run 2026-12-06).
SIM_CELLS_OFF = (
    "amp",
    "cpu_indices",
    "ddp",
    "forgotten_labels",
    "multi_gpu",
    "scalar_operands",
    "torchscript_load",
    "transfer_budget",
    "unregistered_buffers",
)


def cpu_cells(scenario: str, *parts: str) -> Kill:
    """Filter for the scenario's cpu cells whose name holds every part, in order."""
    return (S, f"{scenario}.*" + "*".join(parts) + ("*" if parts else "") + "device=cpu")


def m(
    name: str,
    path: str,
    old: str,
    new: str,
    kill: List[Kill],
    anchor: Optional[str] = None,
    audit: bool = False,
) -> Mutation:
    return {
        "name": name,
        "path": path,
        "old": old,
        "new": new,
        "kill": kill,
        "anchor": anchor,
        "audit": audit,
    }


MUTATIONS = [
    # The five of the audit (issue 13).
    m(
        "to_device_moves_nothing",
        BATCH_MOVER,
        "tensor.to(device, options.non_blocking)",
        "tensor",
        [
            (H, "BatchMover.*"),
            cpu_cells("forgotten_labels", "variant=batch_mover"),
            cpu_cells("cpu_indices", "variant=batch_mover"),
        ],
        audit=True,
    ),
    m(
        "parameter_device_always_cpu",
        FOLLOW,
        "return parameter.device();",
        "return torch::Device(torch::kCPU);",
        [
            (H, "ParameterDevice.*"),
            cpu_cells("forgotten_labels", "variant=self_moving_module"),
            cpu_cells("cpu_indices", "variant=self_moving_module"),
        ],
        audit=True,
    ),
    m(
        "manual_to_forgets_targets",
        LABELS,
        'if (variant == "manual_to") return {input.to(device), target.to(device)};',
        'if (variant == "manual_to") return {input.to(device), target};',
        [cpu_cells("forgotten_labels", "variant=manual_to")],
        audit=True,
    ),
    m(
        "projection_plain_member_in_check_to_device",
        BUFFERS,
        "Projector model(registers(cell));",
        "Projector model(false);",
        [cpu_cells("unregistered_buffers", "check=to_device/variant=registered_buffer")],
        anchor="void check_to_device(",
        audit=True,
    ),
    m(
        "grad_scaler_at_scale_1",
        SCALER,
        "scale_(options.init_scale)",
        "scale_(1.0)",
        [(H, "GradScaler.*"), cpu_cells("amp", "variant=grad_scaler")],
        audit=True,
    ),
    # The batch mover: every container kind, targets included.
    m(
        "vector_not_mapped",
        MAP_TENSORS,
        "mapped.push_back(map_tensors(item, fn));",
        "mapped.push_back(item);",
        [(H, "BatchMover.*")],
    ),
    m(
        "pair_second_not_mapped",
        MAP_TENSORS,
        "return {std::move(first), map_tensors(pair.second, fn)};",
        "return {std::move(first), pair.second};",
        [(H, "BatchMover.*")],
    ),
    m(
        "tuple_not_mapped",
        MAP_TENSORS,
        "std::tuple<Ts...>{map_tensors(items, fn)...}",
        "std::tuple<Ts...>{items...}",
        [(H, "BatchMover.*")],
    ),
    m(
        "map_not_mapped",
        MAP_TENSORS,
        "mapped.emplace(key, map_tensors(value, fn));",
        "mapped.emplace(key, value);",
        [(H, "BatchMover.*")],
        anchor="  std::map<std::string, T> mapped;",
    ),
    m(
        "unordered_map_not_mapped",
        MAP_TENSORS,
        "mapped.emplace(key, map_tensors(value, fn));",
        "mapped.emplace(key, value);",
        [(H, "BatchMover.*")],
        anchor="  std::unordered_map<std::string, T> mapped;",
    ),
    m(
        "example_data_not_mapped",
        MAP_TENSORS,
        "D data = map_tensors(example.data, fn);",
        "D data = example.data;",
        [(H, "BatchMover.*")],
    ),
    m(
        "example_target_not_mapped",
        MAP_TENSORS,
        "return {std::move(data), map_tensors(example.target, fn)};",
        "return {std::move(data), example.target};",
        [(H, "BatchMover.*")],
    ),
    m(
        "targetless_example_not_mapped",
        MAP_TENSORS,
        "return {map_tensors(example.data, fn)};",
        "return {example.data};",
        [(H, "BatchMover.*")],
    ),
    m(
        "undefined_tensor_moved",
        MAP_TENSORS,
        "return tensor.defined() ? fn(tensor) : tensor;",
        "return fn(tensor);",
        [(H, "BatchMover.*")],
    ),
    # parameter_device and the self-moving modules.
    m(
        "parameter_device_ignores_buffers",
        FOLLOW,
        "return buffer.device();",
        "return torch::Device(torch::kCPU);",
        [(H, "ParameterDevice.*")],
    ),
    m(
        "self_moving_classifier_moves_nothing",
        LABELS,
        "return {input.to(device), target.to(device)};",
        "return {input, target};",
        [cpu_cells("forgotten_labels", "variant=self_moving_module")],
        anchor="Operands follow(",
    ),
    m(
        "manual_to_forgets_indices",
        INDICES,
        'if (variant == "manual_to") return indices.to(device);',
        'if (variant == "manual_to") return indices;',
        [cpu_cells("cpu_indices", "variant=manual_to")],
    ),
    m(
        "self_moving_table_moves_nothing",
        INDICES,
        "return indices.to(tp::fixes::parameter_device(*this));",
        "return indices;",
        [cpu_cells("cpu_indices", "variant=self_moving_module")],
    ),
    # Buffer registration.
    m(
        "buffer_never_registered",
        BUFFERS,
        'if (register_projection) projection = register_buffer("projection", projection);',
        "",
        [cpu_cells("unregistered_buffers", "variant=registered_buffer")],
    ),
    # The map_location load.
    m(
        "map_to_cpu_without_map",
        CHECKPOINT,
        "torch::load(loaded, path, torch::kCPU);",
        "torch::load(loaded, path);",
        [cpu_cells("checkpoint_map_location", "case=map_to_cpu")],
    ),
    m(
        "map_to_model_device_without_map",
        CHECKPOINT,
        "torch::load(model, checkpoint.path, map_location);",
        "torch::load(model, checkpoint.path);",
        [cpu_cells("checkpoint_map_location", "case=map_to_model_device")],
    ),
    # The GradScaler.
    m(
        "loss_not_scaled",
        AMP,
        "scaler.scale(loss).backward();",
        "loss.backward();",
        [cpu_cells("amp", "variant=grad_scaler")],
    ),
    m(
        "amp_scaler_made_at_scale_1",
        AMP,
        "? kOverflowingScale : kInitScale}",
        "? kOverflowingScale : 1.0}",
        [cpu_cells("amp", "variant=grad_scaler")],
    ),
    m(
        "gradients_not_unscaled",
        SCALER,
        "grad.mul_(1.0 / scale_);",
        "grad.mul_(1.0);",
        [(H, "GradScaler.*"), cpu_cells("amp", "variant=grad_scaler")],
    ),
    m("steps_on_inf", SCALER, "if (*found_inf_) return false;", "", [(H, "GradScaler.*")]),
    m(
        "nan_not_found",
        SCALER,
        "!torch::isfinite(grad).all().item<bool>()",
        "torch::isinf(grad).any().item<bool>()",
        [(H, "GradScaler.*")],
    ),
    m("no_backoff", SCALER, "scale_ *= options_.backoff_factor;", "", [(H, "GradScaler.*")]),
    m("never_grows", SCALER, "scale_ *= options_.growth_factor;", "", [(H, "GradScaler.*")]),
    # The prefetcher's CPU pass-through.
    m(
        "prefetcher_cpu_skips_a_batch",
        PREFETCHER,
        "      std::optional<Batch> batch = source_();",
        "      source_();\n      std::optional<Batch> batch = source_();",
        [(H, "Prefetcher.Cpu*")],
    ),
    m(
        "prefetcher_cpu_copies",
        PREFETCHER,
        "      return to_device(*batch, device_);",
        "      return map_tensors(*batch, [](const torch::Tensor& t) { return t.clone(); });",
        [(H, "Prefetcher.Cpu*")],
    ),
    # Expected errors scoped to the statement under test (harness/internal/expected_error.cpp).
    # The archive rewriting reads a file that is not there: FileNotFound, raised while preparing,
    # the class the missing_file cell expects from its torch::load.
    m(
        "error_while_preparing",
        CHECKPOINT,
        'tp::archive::retag_devices(dir.file("saved.pt"),',
        'tp::archive::retag_devices(dir.file("never_saved.pt"),',
        [cpu_cells("checkpoint_map_location", "case=missing_file")],
    ),
    m(
        "judge_ignores_the_region",
        JUDGE,
        "if (record.raised_in.empty() || record.raised_message != record.message) {",
        "if (false) {",
        [(H, "ExpectedError.*")],
    ),
    m(
        "judge_ignores_the_argument",
        JUDGE,
        "if (!argument.empty() && named && *named != argument) {",
        "if (false) {",
        [(H, "ExpectedError.*")],
    ),
    # One product of the axes: the named axis varies slowest (the host cache's one size at a time).
    m(
        "product_ignores_slowest",
        NAMING,
        "std::rotate(order.begin(), it, it + 1);",
        "(void)it;",
        [(H, "Naming.*")],
    ),
    # The classifier's wrappers and families (harness/error_class.cpp, message_families.cpp),
    # held by the corpus of real messages and the near misses (harness/messages/).
    m(
        "interpreter_wrapper_kept",
        "harness/error_class.cpp",
        "const std::string inner = unwrap_interpreter(text);",
        "const std::string inner = text;",
        [(H, "MessageCorpus.*:CoreMessage.*")],
    ),
    m(
        "python_exception_name_kept",
        "harness/error_class.cpp",
        "std::regex_search(text, found, front_prefix())) {",
        "false) {",
        [(H, "MessageCorpus.*:CoreMessage.*")],
    ),
    m(
        "any_op_without_a_cuda_kernel_is_a_missing_backend",
        "harness/message_families.cpp",
        "R\"(^Could not run 'aten::(empty|empty\\.memory_format|empty_strided|_pin_memory)' with",
        "R\"(^Could not run '[\\w:.]+' with",
        [(H, "MessageCorpus.NoNearMissClassifies")],
    ),
    m(
        "conv_types_not_compared",
        "harness/message_families.cpp",
        "^Input type \\(((torch\\.cuda\\.|CUDA)",
        "^NEVER type \\(((torch\\.cuda\\.|CUDA)",
        [(H, "MessageCorpus.EveryEntryClassifiesToItsExpectedClass")],
    ),
    # tp::sim (issue 27): a second simulated device aliased to the first (every allocation tagged
    # index 0), and the 0-dim CPU exemption applied to every operator again.
    m(
        "sim_device_index_dropped",
        SIM,
        "return {data, data, &free_device_bytes, at_index(index)};",
        "return {data, data, &free_device_bytes, at_index(0)};",
        [(H, "SimDevices.*"), (S, "multi_gpu.variant=in*devices=sim0+sim1")],
    ),
    # Host reads of sim memory (harness/sim/README.md): the reservation behind a sim tensor's
    # data pointer made readable, so data_ptr<T>()[i] on sim:0 reads again instead of dying.
    m(
        "sim_host_reads_unguarded",
        SIM_MEMORY,
        "mmap(nullptr, length, PROT_NONE,",
        "mmap(nullptr, length, PROT_READ | PROT_WRITE,",
        [(H, "SimHostReads.*")],
    ),
    m(
        "sim_over_broad_exemption",
        SIM_FALLBACK,
        "DeviceCheck device_check(schema, rule != Rule::kWrapper);",
        "DeviceCheck device_check(schema, true);",
        [(H, "SimExemptions.*"), (S, "scalar_operands.case=label_*device=sim0")],
    ),
    # CUDA's rules past the wrapper as read from each version's source (scalar_rules.inc): the
    # table ignored, TensorIterator's one-scalar limit, allow_cpu_scalars taken as always set, a
    # launcher's refusal, an accepted scalar refused, forms no longer checked as called, an
    # undecided operator refused, searchsorted's sorter check.
    m(
        "sim_scalar_rules_ignored",
        SIM_FALLBACK,
        "if (scalar.rule != IteratorRule::kUndecided) {",
        "if (false) {",
        [(H, "SimCudaRules.*")],
    ),
    m(
        "sim_cpu_scalar_limit_dropped",
        SIM_CUDA_RULES,
        'TORCH_CHECK(!scalar, "Trying to pass too many CPU scalars to non-CPU kernel!");',
        "",
        [(H, "SimCudaRules.AddOutWithTwoCpuScalarsRaises")],
    ),
    m(
        "sim_every_iterator_allows_cpu_scalars",
        SIM_CUDA_RULES,
        "const bool allow = verdict == IteratorRule::kAccept || verdict == IteratorRule::kKernel;",
        "const bool allow = true;",
        [(H, "SimCudaRules.BinaryCrossEntropyWithAZeroDimCpuTargetRaises")],
    ),
    m(
        "sim_kernel_refusal_dropped",
        SIM_CUDA_RULES,
        "if (scalar && verdict == IteratorRule::kKernel)",
        "if (false)",
        [(H, "SimCudaRules.MseLossWithAZeroDimCpuTargetRaises:SimCudaRules.LerpWith*")],
    ),
    m(
        "sim_accepted_scalar_refused",
        SIM_CUDA_RULES,
        'if (verdict == "accept") return IteratorRule::kAccept;',
        'if (verdict == "accept") return IteratorRule::kIterator;',
        [(H, "SimCudaRules.AddTakesAZeroDimCpuScalar")],
    ),
    m(
        "sim_forms_not_checked_as_called",
        "harness/sim/kernels.cpp",
        "  register_as_called();\n",
        "",
        [(H, "SimCudaRules.AFormCheckedByItsOwnWrapperRefusesWhatItsOutFormTakes")],
    ),
    m(
        "sim_undecided_refused",
        SIM_CUDA_RULES,
        "return IteratorRule::kUndecided;  // undecided, or no such TensorIterator operator",
        "return IteratorRule::kIterator;",
        [(H, "SimCudaRules.AnUndecidedOperatorKeepsTheScalarExemption")],
    ),
    m(
        "sim_sorter_not_checked",
        SIM_CUDA_RULES,
        'if (schema.name() != "aten::searchsorted") return;',
        "return;",
        [(H, "SimCudaRules.SearchsortedChecksItsSorterAsCudasKernelDoes")],
    ),
    # tp::sim's dtype refusals (cuda_dtypes.inc) skipped: int64 mm and a bool sort (1.13) run on
    # sim:0 as on the CPU, where CUDA refuses them.
    m(
        "sim_cuda_dtype_refusal_skipped",
        SIM_DTYPES,
        "  if (checks == nullptr) return c10::nullopt;",
        "  if (true) return c10::nullopt;",
        [(H, "SimDtypes.*")],
    ),
    # TorchScript archives (scenarios/torchscript_load.cpp): the map, and a device baked into the
    # code. Without a map the cuda:0-tagged archive is refused on a host without CUDA.
    m(
        "torchscript_map_dropped",
        TORCHSCRIPT,
        "return torch::jit::load(archive.tagged_path, torch::kCPU);",
        "return torch::jit::load(archive.tagged_path);",
        [cpu_cells("torchscript_load", "case=map_to_cpu")],
        anchor="void map_to_cpu(",
    ),
    m(
        "torchscript_map_to_model_device_dropped",
        TORCHSCRIPT,
        "torch::jit::load(path, cell.device());",
        "torch::jit::load(path);",
        [cpu_cells("torchscript_load", "case=map_to_model_device")],
        anchor="void map_to_model_device(",
    ),
    m(
        "torchscript_baked_device_fix_reverted",
        TORCHSCRIPT,
        'times_ones_on("x.device")',
        "times_ones_on(literal(traced_on(cell)))",
        [cpu_cells("torchscript_load", "case=baked_device_fixed")],
    ),
    # TorchScript's errors that are not c10::Error (the interpreter's std::runtime_error, the
    # compiler's ErrorReport) no longer judged: they escape the region and fail the cell.
    m(
        "torchscript_errors_not_judged",
        SCENARIO_API,
        "if (!interpreter && !compiler) throw;",
        "throw;",
        [(H, "ExpectedError.TorchScript*"), cpu_cells("torchscript_load", "case=missing_code")],
    ),
    # Issue 26: the runner enforces the judge (bad cells through the real runner, in a child
    # process: harness/tests/runner_end_to_end_test.cpp), TP_EXPECT_CLOSE fails NaN, and the
    # GradScaler finds an inf in any one of several parameters.
    m(
        "runner_notes_unexpected_error",
        RUNNER,
        "if (const auto why = unexpected_error(record)) ADD_FAILURE() << *why;",
        "if (const auto why = unexpected_error(record)) cell.note(*why);",
        [(H, "RunnerEndToEnd.*")],
    ),
    m(
        "expect_close_passes_nan",
        NUMERIC,
        "EXPECT_LE(tp_ratio_, 1.0)",
        "EXPECT_FALSE(tp_ratio_ > 1.0)",
        [(H, "ExpectClose.*")],
    ),
    m(
        "found_inf_overwritten",
        SCALER,
        "if (!found_inf) found_inf = !torch::isfinite",
        "found_inf = !torch::isfinite",
        [(H, "GradScaler.*")],
    ),
    # Data-parallel training (scenarios/ddp.cpp), killed on the CPU column.
    m(
        "ddp_rank_map_dropped",
        DDP,
        "torch::load(model, path, device); });",
        "torch::load(model, path); });",
        [cpu_cells("ddp", "variant=checkpoint_with_rank_map")],
    ),
    m(
        "ddp_allreduce_skipped",
        DDP,
        "group.allreduce(flat)->wait();",
        "",
        [cpu_cells("ddp", "variant=each_rank_on_its_device")],
    ),
    m(
        "ddp_average_not_divided",
        DDP,
        "flat[0].div_(kWorld);",
        "",
        [cpu_cells("ddp", "variant=each_rank_on_its_device")],
    ),
    # Issue 32: the transfer budget. A TransferLog blind to device-to-host copies (killed by its
    # unit tests and the sim:0 cells that count a .cpu()); the fix's registered mask made on the
    # CPU and moved every step again (killed by the fix cells' exact per-step counts on sim:0).
    m(
        "transfer_log_misses_device_to_host",
        TRANSFER_LOG,
        "add_copy(counts.device_to_host, bytes, non_blocking);",
        "",
        [(H, "SimTransferLog.*"), (S, "transfer_budget.*device=sim0")],
    ),
    m(
        "registered_mask_moved_every_step",
        BUDGET,
        ": run.net->blocked;",
        ": blocked_classes().to(device);",
        [(S, "transfer_budget.*device=sim0")],
    ),
    # Faults each caught by one check only (issue 45, faults.py): with one planted, a mutant that
    # deletes that check lets a cell pass. A loop that never steps: only "the loss did not fall".
    m(
        "train_sgd_never_steps",
        TRAINING,
        "    optimizer.step();\n",
        "",
        [cpu_cells("forgotten_labels", "variant=manual_to"), cpu_cells("cpu_indices", "manual_to")],
    ),
    # A loss off by a constant on the device: the same gradients, the same weights; only the
    # losses compared with the float64 reference differ.
    m(
        "labels_loss_offset_on_the_device",
        LABELS,
        "return loss_of(kind, logits, operands.target); });",
        "return loss_of(kind, logits, operands.target) + 1.0; });",
        [cpu_cells("forgotten_labels", "variant=manual_to")],
    ),
    m(
        "indices_loss_offset_on_the_device",
        INDICES,
        "return torch::mse_loss(rows, target.to(cell.device()));",
        "return torch::mse_loss(rows, target.to(cell.device())) + 1.0;",
        [cpu_cells("cpu_indices", "variant=manual_to")],
    ),
    # A lookup that ignores its op: index_select's rows and gradients equal Embedding's, so only
    # the check of autograd's node ("the lookup is not index_select") sees it.
    m(
        "lookup_always_embedding",
        INDICES,
        '    if (op == "index_select") '
        "return torch::index_select(embedding->weight, 0, indices);\n",
        "",
        [cpu_cells("cpu_indices", "op=index_select", "variant=manual_to")],
    ),
    # A projection every module draws alike: the fresh module rebuilds the value its checkpoint
    # lacks, so the plain member cannot show; only "came back from a checkpoint" sees it.
    m(
        "projection_alike_in_every_module",
        BUFFERS,
        "projection(torch::randn({kFeatures, kProjected})) {",
        "projection(torch::ones({kFeatures, kProjected})) {",
        [cpu_cells("unregistered_buffers", "check=save_load/variant=plain_member")],
    ),
    # The budget's device-to-device ceiling (expect_within): a clone of each step's logits.
    m(
        "budget_outputs_kept_as_clones",
        BUDGET,
        "logits.detach().cpu() : logits.detach());",
        "logits.detach().cpu() : logits.detach().clone());",
        [(S, "transfer_budget.case=registered_mask/device=sim0")],
    ),
    # A step that never updates: the same counts, outputs and loss on the CPU and the sim; only
    # "the loop never trained its weight".
    m(
        "budget_step_never_updates",
        BUDGET,
        "  optimizer.step();\n  if (mistakes.item_every_step) {",
        "  if (mistakes.item_every_step) {",
        [(S, "transfer_budget.case=registered_mask/device=sim0")],
    ),
    # The logged loss overwritten each step (item_every_step): the sim and its CPU twin alike, the
    # same counts; only "the variant logs the loss the fix logs".
    m(
        "budget_logged_loss_overwritten",
        BUDGET,
        "run.logged += loss.item<double>();",
        "run.logged = loss.item<double>();",
        [(S, "transfer_budget.case=item_every_step/device=sim0")],
    ),
    # describe blind to syncs: the exact checks compare describe with describe and still pass;
    # only describe's format check fails.
    m(
        "budget_describe_drops_syncs",
        BUDGET,
        'if (count != 0) out << " " << count << " " << op;',
        'if (count == 0) out << " " << count << " " << op;',
        [(S, "transfer_budget.case=registered_mask/device=sim0")],
    ),
    # The weight exported as a buffer: the same values and forward after any map; only the check
    # of what each tensor loads as (parameter or buffer) fails.
    m(
        "torchscript_weight_exported_as_buffer",
        TORCHSCRIPT,
        'module.register_parameter("weight", torch::randn({kOutputs, kFeatures}), false);',
        'module.register_parameter("weight", torch::randn({kOutputs, kFeatures}), true);',
        [cpu_cells("torchscript_load", "case=map_to_cpu")],
    ),
    # AMP's loop with a learning rate of 0: the first loss matches fp32, nothing overflows; only
    # "the loss did not fall".
    m(
        "amp_learning_rate_zero",
        AMP,
        "optimizer(model->parameters(), torch::optim::SGDOptions(kLearningRate));",
        "optimizer(model->parameters(), torch::optim::SGDOptions(0.0));",
        [cpu_cells("amp", "variant=grad_scaler")],
    ),
    # The sim's own round trip inside its fallback 0.1 % off (a lossy staging copy): after one
    # forward on the sim, only the comparison with the saved module's output sees it.
    m(
        "sim_fallback_copies_off",
        "harness/sim/kernels.cpp",
        "  host_alias(dst).copy_(host_alias(self));\n",
        "  host_alias(dst).copy_(host_alias(self));\n"
        "  if (dst.device().is_cpu() && !self.device().is_cpu() && dst.is_floating_point() &&\n"
        "      in_fallback_scope())\n"
        "    dst.mul_(1.001);\n",
        [(S, "torchscript_load.*sim0*")],
    ),
    # The checkpoint saved from a fresh model, not the one the case compares with: the load still
    # maps where it should; only the values checks fail (bit-identical parameters, the forward).
    m(
        "checkpoint_of_a_fresh_model",
        CHECKPOINT,
        '    torch::save(saved, dir.file("saved.pt"));',
        '    torch::save(Net(), dir.file("saved.pt"));',
        [
            cpu_cells("checkpoint_map_location", "case=map_to_cpu"),
            cpu_cells("checkpoint_map_location", "case=map_to_model_device"),
        ],
    ),
    # The case's checkpoint path always the one saved on the cell's device: off the CPU the map
    # then proves nothing; only the check that it comes from another device fails.
    m(
        "checkpoint_path_ignores_from_cpu",
        CHECKPOINT,
        'path = from_cpu ? dir.file("from_cpu.pt") : dir.file("saved.pt");',
        'path = dir.file("saved.pt");',
        [(S, "checkpoint_map_location.case=cpu_map_gpu_model/device=sim0")],
    ),
    # AMP's autocast guard a temporary, destroyed at once: the forward runs in fp32, so the first
    # loss, the gradients and the fall all hold; only "autocast did not cast linear" fails.
    m(
        "amp_autocast_guard_temporary",
        AMP,
        "const tp::compat::AutocastGuard autocast(cell.device().type(), low_dtype(",
        "tp::compat::AutocastGuard(cell.device().type(), low_dtype(",
        [cpu_cells("amp", "variant=targets_on_cpu"), cpu_cells("amp", "variant=grad_scaler")],
    ),
    # AMP's loss off by a constant: the same gradients, so the scaling checks and the fall hold;
    # only the first loss against the fp32 reference fails.
    m(
        "amp_loss_offset_in_autocast",
        AMP,
        "[&] { return torch::nn::functional::cross_entropy(logits, target); });",
        "[&] { return torch::nn::functional::cross_entropy(logits, target) + 1.0; });",
        [cpu_cells("amp", "variant=grad_scaler")],
    ),
    # The fix run on the CPU tensor, not its device copy: the right values on the wrong device;
    # only the device checks of the sim cells fail.
    m(
        "scalar_add_on_the_cpu_operand",
        SCALARS,
        "return on_device + shift; });",
        "return x + shift; });",
        [(S, "scalar_operands.case=scalar_in_add/device=sim0")],
    ),
    m(
        "label_loop_on_the_cpu_logits",
        SCALARS,
        "return per_sample_loss(on_device, labels, nll, move_label);",
        "return per_sample_loss(logits, labels, nll, move_label);",
        [(S, "scalar_operands.case=label_moved/device=sim0")],
    ),
    # The device GRU made afresh instead of cloned from its CPU twin: other weights, the same
    # device; only the output against the twin's fails.
    m(
        "gru_not_cloned_from_its_twin",
        SINGLE_OPS,
        "torch::nn::GRU gru(std::dynamic_pointer_cast<torch::nn::GRUImpl>(twin->clone(cell.device(",
        "torch::nn::GRU gru(2, kHidden);\n  gru->to(cell.device());  //",
        [cpu_cells("single_op_checks", "case=hidden_with_the_input")],
    ),
    # The fill run on the CPU scores and mask, not their device copies: the right values on the
    # wrong device; only the device check of mask_moved's sim cell sees it (mask_on_cpu's sim
    # cell fails too: its expected error is gone).
    m(
        "fill_on_the_cpu_scores",
        SCALARS,
        "return on_device.masked_fill(used, -1e9); });",
        "return scores.masked_fill(mask, -1e9); });",
        [(S, "scalar_operands.case=mask_moved/device=sim0")],
    ),
    # The forward's output read back to the CPU: the values the reference has; only the device
    # check of the registered buffer's sim cell sees it.
    m(
        "buffers_output_read_back_to_the_cpu",
        BUFFERS,
        "return model(device_input); });",
        "return model(device_input).cpu(); });",
        [(S, "unregistered_buffers.check=to_device/variant=registered_buffer/device=sim0")],
    ),
    # The float64 forward's output cast back to float32: values within the float32 reference's
    # tolerance; only the dtype check of the registered buffer's cpu cell sees it.
    m(
        "buffers_output_cast_back_to_float32",
        BUFFERS,
        "return model(input); });",
        "return model(input).to(torch::kFloat); });",
        [cpu_cells("unregistered_buffers", "check=to_float64/variant=registered_buffer")],
    ),
    # zero_grad forgotten in the budget's step: gradients accumulate alike on the CPU and the sim,
    # with the same counts; only "each step is one plain SGD step" (tp::train_sgd) sees it.
    m(
        "budget_gradients_accumulate",
        BUDGET,
        "  optimizer.zero_grad();\n  const torch::Tensor logits = run.net(features, mask);",
        "  const torch::Tensor logits = run.net(features, mask);",
        [(S, "transfer_budget.case=registered_mask/device=sim0")],
    ),
    # The sim's copies to the CPU 0.1 % off: every floating value a program reads back from sim
    # memory (not the sim's own copies inside its fallback, which would compound over a training
    # loop) is wrong by a relative 1e-3, beyond every scenario's tolerance. A mutant that loosens
    # or deletes the one check of a sim cell that catches it lets that cell pass (faults.py).
    m(
        "sim_copies_to_cpu_off",
        "harness/sim/kernels.cpp",
        "  host_alias(dst).copy_(host_alias(self));\n",
        "  host_alias(dst).copy_(host_alias(self));\n"
        "  if (dst.device().is_cpu() && !self.device().is_cpu() && dst.is_floating_point() &&\n"
        "      !in_fallback_scope())\n"
        "    dst.mul_(1.001);\n",
        [(S, f"{name}.*sim0*") for name in SIM_CELLS_OFF],
    ),
]
