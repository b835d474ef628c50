"""How JAX's batching internals differ across releases: measured history, and the live measure.

Each `Fact` is one question with the answer each release gave, measured in a fresh process per
release (``tools/measure-history`` re-measures them all). ``measure(name)`` asks the installed
JAX the same question, so a lesson can print the history with the student's own row computed
live, and the release matrix fails where the history is wrong for the JAX it runs.

``python -m grader.core._jax.history`` prints every live answer as JSON.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import jax

from . import JAX_VERSION, release  # noqa: F401  (release: for core.history)


@dataclass(frozen=True)
class Fact:
    """One way releases differ: a question, and the answer from each release on (oldest first)."""
    question: str
    since: tuple[tuple[str, object], ...]      # (first release, value), in release order

    def value_for(self, version: tuple[int, ...]) -> object:
        value = self.since[0][1]
        for first, later in self.since:
            if release(first) <= version:
                value = later
        return value

    def rows(self) -> list[tuple[str, object]]:
        """``("0.4.36 - 0.8.1", value)`` per range; the last range is open-ended."""
        out = []
        for i, (first, value) in enumerate(self.since):
            nxt = self.since[i + 1][0] if i + 1 < len(self.since) else None
            out.append((f"{first} - {PREVIOUS[nxt]}" if nxt else f"{first} and later", value))
        return out


# Every release from the oldest supported, in order: a range names its last measured release.
MEASURED = ("0.4.36", "0.4.37", "0.4.38", "0.5.0", "0.5.1", "0.5.2", "0.5.3", "0.6.0", "0.6.1",
            "0.6.2", "0.7.0", "0.7.1", "0.7.2", "0.8.0", "0.8.1", "0.8.2", "0.8.3", "0.9.0",
            "0.9.0.1", "0.9.1", "0.9.2", "0.10.0", "0.10.1", "0.10.2", "0.11.0", "0.11.1",
            "0.11.2", "0.12.0", "0.12.0.1")
PREVIOUS = {b: a for a, b in zip(MEASURED, MEASURED[1:])}
_FIRST, _PLAIN, _FANCY = MEASURED[0], "primitive_batchers", "fancy_primitive_batchers"
_MOVED_AT_0_5_1 = ((_FIRST, _PLAIN), ("0.5.1", _FANCY))
_MOVED_AT_0_8_0 = ((_FIRST, _PLAIN), ("0.8.0", _FANCY))

HISTORY: dict[str, Fact] = {
    "layout": Fact("how the batching-rule tables are laid out",
                   (("0.4.36", "split"), ("0.8.2", "collapsed"))),
    # Rules migrate from primitive_batchers to fancy_primitive_batchers release by release.
    "dot_general_table": Fact("which table holds dot_general's rule", _MOVED_AT_0_5_1),
    "broadcast_in_dim_table": Fact("which table holds broadcast_in_dim's rule", _MOVED_AT_0_5_1),
    "reshape_table": Fact("which table holds reshape's rule", _MOVED_AT_0_5_1),
    "add_any_table": Fact("which table holds add_any's rule", _MOVED_AT_0_8_0),
    "conv_table": Fact("which table holds conv_general_dilated's rule", _MOVED_AT_0_8_0),
    "proxy_in": Fact("what `lax.sin_p in primitive_batchers` does",
                     (("0.4.36", "answers"), ("0.8.2", "KeyError"), ("0.9.0", "TypeError"))),
    "skippable_batchers": Fact("whether batching has a skippable_batchers dict",
                               (("0.4.36", True), ("0.9.1", False))),
    "aval": Fact("how a BatchTracer gets its aval",
                 (("0.4.36", "property"), ("0.10.0", "stored in __init__"))),
    "not_mapped": Fact("whether batching still defines the not_mapped alias",
                       (("0.4.36", True), ("0.10.2", False))),
    "matchaxis_signature": Fact(
        "matchaxis's parameters",
        (("0.4.36", "axis_name, sz, src, dst, x, sum_match"),
         ("0.5.1", "axis_name, sz, mesh_axis, src, dst, x, sum_match"),
         ("0.10.0", "axis_data, src, dst, x, sum_match"))),
    "vectorized_batcher_axis_data": Fact("whether vectorized_batcher takes axis_data",
                                         (("0.4.36", False), ("0.8.2", True))),
    "make_jaxpr_returns": Fact("the class jax.make_jaxpr returns",
                               (("0.4.36", "ClosedJaxpr"), ("0.11.0", "Jaxpr"))),
    "jit_primitive": Fact("the name of jit's primitive in a jaxpr",
                          (("0.4.36", "pjit"), ("0.7.0", "jit"))),
    "literal_print": Fact("how a jaxpr prints the literal 2.0",
                          (("0.4.36", "2.0"), ("0.6.1", "2.0:f32[]"))),
    "process_call": Fact("whether BatchTrace has process_call",
                         (("0.4.36", True), ("0.11.1", False))),
    "scan_params": Fact("the parameters a scan equation counts its inputs with",
                        (("0.4.36", "num_consts, num_carry"), ("0.11.0", "ft_in, ft_out"))),
    "vmap_sum_match": Fact("what jax.vmap's sum_match parameter is",
                           (("0.4.36", "absent"), ("0.9.0", "undocumented"),
                            ("0.11.1", "documented"))),
    "vmap_out_axes_infer": Fact("whether jax.vmap accepts batching.infer in out_axes",
                                (("0.4.36", False), ("0.9.0", True))),
    "tracer_repr": Fact("how a BatchTracer prints itself",
                        (("0.4.36", "Traced<...>with<BatchTrace>"), ("0.7.0", "VmapTracer<...>"),
                         ("0.8.2", "VmapTracer(aval=..., batched=...)"))),
    "unmapped_sin_route": Fact("whether vmap calls sin's rule for an unmapped input, or binds it above",
                               (("0.4.36", "shortcut"), ("0.8.2", "rule"))),
    "out_axes_move_processed": Fact(
        "whether vmap's move of the result to out_axes=0 passes through process_primitive",
        (("0.4.36", False), ("0.6.0", True))),
    "origin_message": Fact("what a ConcretizationTypeError calls a vmap tracer",
                           (("0.4.36", "BatchTracer"), ("0.12.0", "VmapTracer"))),
    "public_batching_exports": Fact(
        "which of BatchTracer, matchaxis, vectorized_batcher jax.interpreters.batching exports",
        (("0.4.36", "BatchTracer, matchaxis, vectorized_batcher"), ("0.9.0", "none"))),
    "defreducer_signature": Fact("defreducer's parameters",
                                 (("0.4.36", "prim, ident"), ("0.9.1", "prim"))),
    # One row: the same answer on every release measured, checked on each so that a change shows.
    "jit_table": Fact("which table holds jit's (pjit's) rule", ((_FIRST, _FANCY),)),
    "in_axes_1_transpose_eqn": Fact("whether vmap(sin, in_axes=1)'s jaxpr holds a transpose",
                                    ((_FIRST, True),)),
    "leak_message": Fact("what an UnexpectedTracerError calls a leaked vmap tracer",
                         ((_FIRST, "BatchTracer"),)),
    "out_axes_none_error": Fact(
        "the error of out_axes=None on a batched output",
        ((_FIRST, "ValueError: at vmap out_axes, got axis spec None but output was batched on axis 0"),)),
    "reducer_np_add": Fact('whether reducer_batcher\'s source holds "np.add(axes, 1)"', ((_FIRST, True),)),
    # Added for the lessons (measured on all 29 releases, one fresh process each).
    "batch_dim_annotation": Fact("how BatchTracer.__init__ annotates batch_dim",
                                 (("0.4.36", "NotMapped | int | RaggedAxis"), ("0.8.2", "NotMapped | int"))),
    "matchaxis_extra_cases": Fact("which markers besides an int and None matchaxis's source handles",
                                  (("0.4.36", "jumble_axis"), ("0.8.2", "none"), ("0.9.0", "infer, sum_axis"))),
    "shared_rule_names": Fact("which primitive names key two different rules after one vmap",
                              (("0.4.36", "pbroadcast"), ("0.6.0", "none"))),
    "ordinary_rules_table": Fact("which table holds the rules of sin, add, reduce_sum and transpose",
                                 ((_FIRST, _PLAIN), ("0.8.2", _FANCY))),
    "vmap_out_axes_sum_axis": Fact("whether jax.vmap accepts batching.sum_axis in out_axes (and sums)",
                                   (("0.4.36", False), ("0.9.0", True))),
    # ---- lesson 4, vmap meets autodiff (measures in measures_autodiff.py): measured on the nine
    # matrix releases and, to pin each boundary, on 0.4.37, 0.4.38, 0.6.0, 0.6.1 and 0.12.0.
    "custom_jvp_route": Fact("which BatchTrace method a custom_jvp function reaches under vmap",
                             ((_FIRST, "process_custom_jvp_call (custom_jvp_call)"),)),
    "custom_vjp_route": Fact("which BatchTrace method a custom_vjp function reaches under vmap",
                             ((_FIRST, "process_custom_vjp_call (custom_vjp_call)"),)),
    "custom_vjp_under_jit_route": Fact(
        "which BatchTrace method a custom_vjp function reaches under vmap of jit",
        ((_FIRST, "process_primitive (custom_vjp_call_jaxpr)"),
         ("0.6.1", "process_custom_vjp_call (custom_vjp_call)"))),
    "shared_custom_vjp_output": Fact(
        "what grad does with a custom_vjp output unbatched inside a vmap that gets a cotangent "
        "(left unmapped by out_axes=None, broadcast by out_axes=0, or used inside the vmap)",
        ((_FIRST, "counts its cotangent once per example"), ("0.12.0", "raises ValueError"))),
    "custom_vmap_grad_error": Fact("what jax.grad of a custom_vmap function raises",
                                   ((_FIRST, "AssertionError"), ("0.4.38", "ValueError"))),
    "custom_vmap_rule_when_unmapped": Fact(
        "whether a custom_vmap rule runs for a call whose inputs are all unmapped", ((_FIRST, False),)),
    # Round 2 (a second read against the source): JAX's opt-in custom_vjp (a hijax primitive, read
    # in 0.9.0.1 and 0.9.1's config.py), generic_batching (read in 0.12.0's custom_derivatives.py),
    # and custom_vmap's docstring (read in 0.4.37 and 0.4.38's custom_batching.py).
    "custom_vjp3_route": Fact(
        "which BatchTrace method a custom_vjp function reaches under vmap with jax_custom_vjp3 on",
        ((_FIRST, "no such option"), ("0.9.1", "process_primitive (call_hi_primitive)"))),
    "custom_vjp_generic_batching_route": Fact(
        "which BatchTrace method a custom_vjp function reaches under vmap with "
        "defvjp(..., generic_batching=True)",
        ((_FIRST, "no such option"), ("0.12.0", "process_primitive (call_hi_primitive)"))),
    "custom_vmap_doc_custom_vjp": Fact(
        "whether custom_vmap's docstring says to wrap it in a custom_vjp for reverse mode",
        ((_FIRST, False), ("0.4.38", True))),
}


# ---- lessons 1 and 2, and the appendix (issue 23; their measures: measures_l12.py) ---------------
# Measured on all 29 releases (tools/measure-history, one fresh process each), the boundaries first
# read in the source of each release's jax wheel (core.py, interpreters/batching.py, lax/lax.py, ...).
_MOVED_0_5_1 = "broadcast_in_dim, dot_general, reshape"
HISTORY.update({
    "bind_takes_current_trace": Fact("which method of Primitive hands the current trace to bind_with_trace",
                                     ((_FIRST, "bind"), ("0.5.1", "_true_bind"), ("0.9.2", "bind"))),
    "rule_numpy_int_out_dim": Fact(
        "what becomes of a BatchTracer whose old-style rule answered a numpy integer as its out dim",
        ((_FIRST, "its aval is None"), ("0.8.2", "reading its aval raises"),
         ("0.10.0", "BatchTracer() refuses it"))),
    "batch_dim_hijax": Fact("whether a BatchTracer lets a hijax type read a batch spec that is not an int",
                            ((_FIRST, False), ("0.9.1", True))),
    "moved_rules_use_sharding": Fact(
        "which rules that moved into fancy_primitive_batchers read axis_data for the new axis's sharding",
        ((_FIRST, "none"), ("0.5.1", _MOVED_0_5_1),
         ("0.8.0", "add_any, " + _MOVED_0_5_1.replace("dot_general", "conv_general_dilated, dot_general")))),
    "moved_rules_read_axis_data": Fact(
        "whether each of the 15 rules that moved into fancy_primitive_batchers (0.4.36 to 0.8.1) reads axis_data there",
        ((_FIRST, True),)),
    "jnp_sin_wrapper": Fact("how jax.numpy wraps sin (the inline parameter of its jit)",
                            ((_FIRST, "jit(inline=True)"), ("0.11.0", "jit(inline=Inline.JAX_EARLY)"))),
    "matchaxis_named_refusal": Fact("what matchaxis raises for a batched value sent to None on a named axis",
                                    ((_FIRST, "ValueError"),)),
    "jitted_custom_vjp_entry": Fact(
        "how a jax.custom_vjp traced inside a jit reaches the BatchTrace of a vmap around the jit",
        ((_FIRST, "custom_vjp_call_jaxpr, through process_primitive"),
         ("0.6.1", "custom_vjp_call, through process_custom_vjp_call"))),
    "tracer_inherited_slots": Fact("the slots a BatchTracer inherits from Tracer",
                                   ((_FIRST, "_trace, _line_info"), ("0.8.2", "__weakref__, _trace, _line_info"),
                                    ("0.10.0", "__weakref__, _trace, _line_info, aval"))),
})


# ---- lesson 3, "Batching whole programs" (their measures: measures_l3.py) ------------------------
# Read in each release's jax/_src (pjit.py, lax/control_flow/loops.py, conditionals.py), probed live
# on the nine releases of the matrix; a boundary between two of them is read in the releases' source.
HISTORY.update({
    "jit_rule_calls": Fact("which batching function jit's rule hands the inner program to",
                           ((_FIRST, "batch_jaxpr2"),)),
    "batch_jaxpr2_cached": Fact("whether batch_jaxpr2's work is memoised in a weakref_lru_cache",
                                ((_FIRST, True),)),
    "jit_inline_true_eqn": Fact("whether jax.jit(f, inline=True) leaves a jit equation in the jaxpr",
                                ((_FIRST, False), ("0.11.2", True))),
    "jnp_sin_jit_eqn": Fact("whether jnp.sin (itself a jitted wrapper) leaves a jit equation",
                            ((_FIRST, False),)),
    "cond_batched_predicate": Fact("what vmap makes of a lax.cond whose predicate is batched",
                                   ((_FIRST, "select_n, both branches inlined"),)),
    "while_batched_select": Fact("where a while_loop with a batched predicate holds finished examples",
                                 ((_FIRST, "in its lowering (_pred_bcast_select_hlo)"),)),
    "scan_batched_const_moved": Fact("whether scan's rule moves a const batched on axis 1 to axis 0",
                                     ((_FIRST, True), ("0.12.0", False))),
    "map_batch_size": Fact("how lax.map(f, xs, batch_size=b) is built when b does not divide len(xs)",
                           ((_FIRST, "a scan over vmap(f) of chunks, vmap(f) of the remainder"),)),
    # Round 2 (the first truth review): lax.map's edge cases, and where the control-flow rules
    # depart from "batch_jaxpr with the batch at axis 0". Measured on 23 releases (the nine of the
    # matrix and 0.4.37-0.5.2, 0.6.0, 0.6.1, 0.7.0, 0.7.1, 0.8.0-0.8.2, 0.9.0, 0.12.0); the others
    # read in their source (loops.py's map and _batch_and_remainder, the rules, unchanged there).
    "map_divisible_remainder": Fact("what lax.map(f, xs, batch_size=b) adds for the remainder when b divides len(xs)",
                                    ((_FIRST, "vmap(f) of 0 rows, concatenated"), ("0.6.2", "none"))),
    "map_batch_over_length": Fact("what lax.map(f, xs, batch_size=b) builds when b > len(xs)",
                                  ((_FIRST, "a scan of 0 trips, then vmap(f) of the rest, concatenated"),
                                   ("0.7.0", "vmap(f) alone"))),
    "map_batch_size_zero": Fact("what lax.map(f, xs, batch_size=0) does",
                                ((_FIRST, "raises ZeroDivisionError"), ("0.8.2", "vmap(f) alone"))),
    "cond_rule_calls": Fact("which of batch_jaxpr / batch_jaxpr_axes cond's rule calls",
                            ((_FIRST, "batch_jaxpr"),)),
    "while_rule_calls": Fact("which of batch_jaxpr / batch_jaxpr_axes while's rule calls",
                             ((_FIRST, "batch_jaxpr, batch_jaxpr_axes"),)),
    "scan_rule_calls": Fact("which of batch_jaxpr / batch_jaxpr_axes scan's rule calls",
                            ((_FIRST, "batch_jaxpr"), ("0.12.0", "batch_jaxpr_axes"))),
    "while_batched_const_moved": Fact("whether while's rule moves a const batched on axis 1 before the loop",
                                      ((_FIRST, False),)),
    "while_carry_axis_rank1_pred": Fact("the batch axis of a while's carry when its unbatched predicate has rank 1",
                                        ((_FIRST, 1),)),
    "while_ordered_effect_batched": Fact(
        "vmap of a while on limits [1, 3] whose predicate has an ordered effect (right answer [1, 3])",
        ((_FIRST, "raises ValueError"), ("0.6.0", "[3, 3]"))),
    "cond_select_n_count": Fact("how many select_n a cond (switch) with a batched index makes",
                                ((_FIRST, "branches x operands + outputs"),)),
    "platform_cond_batched_index": Fact("what vmap makes of a platform_dependent cond given a batched index",
                                        ((_FIRST, "select_n"), ("0.6.1", "raises AssertionError"),
                                         ("0.6.2", "cond"))),
    "jit_rule_ragged": Fact("whether jit's rule resolves ragged axes around batch_jaxpr2",
                            ((_FIRST, True), ("0.8.2", False))),
    "jnp_clip_jit_eqn": Fact("whether vmap(jnp.clip) leaves a jit equation", ((_FIRST, True),)),
    "scan_ref_xs": Fact("what vmap does with a scan over a Ref (jax.new_ref) batched on a later axis",
                        ((_FIRST, "no jax.new_ref"), ("0.7.2", "fails"),
                         ("0.12.0", "batched in place; its leading axis raises NotImplementedError"))),
})


def expected(fact: str, version: tuple[int, ...] = JAX_VERSION) -> object:
    """What ``HISTORY`` says release ``version`` (default: the installed one) does."""
    return HISTORY[fact].value_for(version)


from .measures import MEASURES  # noqa: E402  (the measures name the facts above)
from .measures_l3 import MEASURES_L3  # noqa: E402
from .measures_l12 import MEASURES_L12  # noqa: E402

MEASURES = {**MEASURES, **MEASURES_L12, **MEASURES_L3}

assert set(MEASURES) == set(HISTORY), "every fact needs a live measure"


def measure(fact: str) -> object:
    """The installed JAX's answer to ``HISTORY[fact].question``."""
    return MEASURES[fact]()


def _answer(fact: str) -> object:
    """``measure(fact)``, or the crash as text: one broken measure must not hide the others."""
    try:
        return measure(fact)
    except Exception as err:                  # reported, not raised: the matrix lists it
        return f"crashed: {type(err).__name__}: {err}"


def _main() -> None:
    print(json.dumps({"jax": jax.__version__, **{f: _answer(f) for f in HISTORY}}))


if __name__ == "__main__":
    _main()
