"""Answers to lesson 2's exercises: the right ones (the exercise notebook's own solution cells,
read from the source notebook, so there is one copy of each), realistic wrong ones, each named
after its mistake, and the pattern-matching students': what copying the nearest lesson cell,
transcribing a helper or fitting the visible cases gives."""
import jax
import jax.extend.core as xcore
import jax.numpy as jnp
import numpy as np
from jax import lax

from grader.lessons import l2_where_the_axis_goes as L2
from tests.fixtures.solutions import solved

# ---- right ---------------------------------------------------------------------------------------

_RIGHT = solved("02-where-the-axis-goes", jax=jax, jnp=jnp, np=np, lax=lax, L2=L2)
where_it_lands, widened = _RIGHT["where_it_lands"], _RIGHT["widened"]
cheap_where = _RIGHT["cheap_where"]

# ---- where_it_lands: the rules, one function per op, so a wrong answer can swap one ---------------
# (``landing()``, every rule as it should be, is the solution in another form: a test holds the two
# alike, so each wrong answer below is the right one with exactly the swap its name says; likewise
# ``tracing(_widens)`` for widened)


def _sin(ds, ss, args):
    return ds[0]


def _mul(ds, ss, args):
    return ds[0] if None not in ds and ds[0] == ds[1] else 0


def _sum(ds, ss, args):
    return ds[0] - (args[1] < ds[0])


def _concat(ds, ss, args):
    return 0


def _matmul(ds, ss, args):
    if None not in ds:
        return 0
    if ds[0] is not None:
        return min(ds[0], len(ss[0]) - 1)
    return len(ss[0]) - 1 + max(ds[1] - 1, 0)


RULES = {"sin": _sin, "mul": _mul, "sum": _sum, "concat": _concat, "matmul": _matmul}


def _shape(op, ss, args):
    if op in ("sin", "mul"):
        return ss[0]
    if op == "sum":
        return tuple(n for i, n in enumerate(ss[0]) if i != args[1])
    if op == "concat":
        return tuple(2 * n if i == args[2] else n for i, n in enumerate(ss[0]))
    return tuple(ss[0][:-1]) + tuple(ss[1][1:])


def landing(rules=RULES, unmapped=None):
    """where_it_lands with these rules (``unmapped``: what a step with no mapped operand gets)."""
    def where_it_lands(program, in_dims):
        shape, dim = dict(program["inputs"]), dict(in_dims)
        for out, op, *args in program["steps"]:
            names = [a for a in args if isinstance(a, str)]
            ds, ss = [dim[n] for n in names], [shape[n] for n in names]
            shape[out] = _shape(op, ss, args)
            dim[out] = unmapped if all(d is None for d in ds) else rules[op](ds, ss, args)
        return {out: dim[out] for out, *_ in program["steps"]}
    return where_it_lands



lands_by_the_rules = landing()      # nothing swapped: the solution again (tests hold them alike)


def _stays(ds, ss, args):
    return next(d for d in ds if d is not None)


lands_stays = landing({op: _stays for op in RULES})       # lesson 2's "nothing moves", copied
lands_front_always = landing({op: _concat for op in RULES})   # broadcast_batcher's front, everywhere
lands_sin_front = landing({**RULES, "sin": _concat})
lands_broadcast_keeps = landing({**RULES, "mul": _stays})
lands_sum_unshifted = landing({**RULES, "sum": _stays})
lands_dot_lhs_first = landing({**RULES, "matmul": _stays})
lands_concat_keeps = landing({**RULES, "concat": _stays})
lands_mapped_everywhere = landing(unmapped=0)


def lands_fitted(exercise, fallback=lands_stays):
    """The visible cases' answers, looked up by program; ``fallback``'s on anything else."""
    table = {repr((c["program"], c["in_dims"])): exercise.expect(c)
             for c in exercise.cases(np.random.default_rng(0), False)}

    def where_it_lands(program, in_dims):
        return table.get(repr((program, in_dims))) or fallback(program, in_dims)
    return where_it_lands


def lands_by_vmap(program, in_dims):
    """JAX answers: the program run under vmap and its tracers read (what the exercise forbids)."""
    seen = {}

    def probe(*xs):
        values = dict(zip([n for n, _ in program["inputs"]], xs))
        for out, op, *args in program["steps"]:
            fn, n = L2.OPS[op]
            values[out] = fn(*(values[a] for a in args[:n]), *args[n:])
            seen[out] = getattr(values[out], "batch_dim", None)
        return 0.0

    structs = []
    for name, shape in program["inputs"]:
        d = in_dims[name]
        stacked = shape if d is None else tuple(shape[:d]) + (7,) + tuple(shape[d:])
        structs.append(jax.ShapeDtypeStruct(stacked, jnp.float32))
    jax.eval_shape(jax.vmap(probe, in_axes=tuple(in_dims[n] for n, _ in program["inputs"])),
                   *structs)
    return {k: (None if v is None else int(v)) for k, v in seen.items()}


# ---- widened -------------------------------------------------------------------------------------

def tracing(test, attribute=None, follow=True):
    """A widened tool: ``test(eqn, ins, size)`` says whether an equation widens (``ins``: each
    input's state, None where it carries the batch), ``attribute`` which inputs to report."""
    def widened(jaxpr, in_axes, size):
        program = jaxpr.jaxpr
        source = {v: (None if a is not None else {i})
                  for i, (v, a) in enumerate(zip(program.invars, in_axes))}
        found = {}
        for k, eqn in enumerate(program.eqns):
            ins = [source.get(v, set()) for v in eqn.invars if not isinstance(v, xcore.Literal)]
            carried = any(s is None for s in ins)
            comes_from = None if carried else set().union(*ins)
            if test(eqn, ins, size):
                found[k] = tuple(sorted(attribute(eqn, program, in_axes) if attribute
                                        else set().union(*(s for s in ins if s is not None))))
                comes_from = None
            for v in eqn.outvars:       # without ``follow``, only an input counts as unmapped
                source[v] = comes_from if follow else None
        return found
    return widened


def _widens(eqn, ins, size):
    return not any(s is None for s in ins) and any(size in v.aval.shape for v in eqn.outvars)


def _bigger(eqn, ins, size):
    grown = lambda e: int(np.prod(e.outvars[0].aval.shape)) > int(np.prod(e.invars[0].aval.shape))  # noqa: E731
    return not any(s is None for s in ins) and eqn.primitive.name == "broadcast_in_dim" and grown(eqn)


def _broadcast_to_size(eqn, ins, size):
    return eqn.primitive.name == "broadcast_in_dim" and size in eqn.outvars[0].aval.shape


def _every_unmapped(eqn, program, in_axes):
    return {i for i, a in enumerate(in_axes) if a is None}


def _direct(eqn, program, in_axes):
    return {i for i, v in enumerate(program.invars) if v in [u for u in eqn.invars
                                                             if not isinstance(u, xcore.Literal)]
            and in_axes[i] is None}


widened_by_the_definition = tracing(_widens)   # nothing changed: the solution again (held alike)
widened_bigger_than_inputs = tracing(_bigger)
widened_by_output_shape = tracing(lambda e, ins, size: _broadcast_to_size(e, ins, size))
widened_broadcasts_only = tracing(_widens, follow=False)
widened_direct_operands = tracing(_widens, attribute=_direct)


def widened_transcribed(jaxpr, in_axes, size):
    """The course's widening_broadcasts, transcribed: every broadcast_in_dim that grows."""
    return {k: tuple(i for i, a in enumerate(in_axes) if a is None)
            for k, e in enumerate(jaxpr.jaxpr.eqns) if e.primitive.name == "broadcast_in_dim"
            and int(np.prod(e.outvars[0].aval.shape)) > int(np.prod(e.invars[0].aval.shape))}


def _adds_the_batch_axis(eqn, ins, size):
    """Lesson 2's widened_to_batch, transcribed: a broadcast adding one axis of the batch size."""
    if eqn.primitive.name != "broadcast_in_dim":
        return False
    i, o = eqn.invars[0].aval.shape, eqn.outvars[0].aval.shape
    return len(o) == len(i) + 1 and int(np.prod(o)) == int(np.prod(i)) * size


widened_lesson_cell = tracing(_broadcast_to_size, attribute=_every_unmapped)
widened_lesson_helper = tracing(_adds_the_batch_axis, attribute=_direct)
widened_lesson_helper_blames_all = tracing(_adds_the_batch_axis, attribute=_every_unmapped)
widened_no_data_flow = tracing(_widens, attribute=_every_unmapped)


def widened_fitted(exercise, fallback=widened_lesson_cell):
    """The visible cases' answers, looked up by the program's equations; else ``fallback``'s."""
    table = {str(L2.batched_program(c)): exercise.expect(c)
             for c in exercise.cases(np.random.default_rng(0), False)}

    def widened(jaxpr, in_axes, size):
        if str(jaxpr) in table:
            return {k: tuple(v) for k, v in table[str(jaxpr)]}
        return fallback(jaxpr, in_axes, size)
    return widened


# ---- cheap_where ---------------------------------------------------------------------------------

def where_copied(pred, x, y):
    return jnp.where(pred, x, y)


def where_select(pred, x, y):
    return lax.select(pred, x, y)


def where_select_n(pred, x, y):
    return lax.select_n(pred, y, x)


def where_swapped(pred, x, y):
    p = pred.astype(x.dtype)
    return x * (1 - p) + y * p


VISIBLE_EXAMPLES = {(3,), (2, 3), (4,)}        # the visible cases' per-example shapes


def where_fitted(pred, x, y):
    """Right on the visible cases' example shapes, jnp.where on anything else."""
    fits = tuple(np.shape(x)) in VISIBLE_EXAMPLES
    return (cheap_where if fits else where_copied)(pred, x, y)
