"""The measured release history holds for the installed JAX: `make test-matrix` runs this on one release per
minor line, so a wrong row in HISTORY fails on the release it is wrong for."""
import jax
import pytest

from grader.core._jax import B, release
from grader.core._jax import history as H


@pytest.mark.parametrize("fact", list(H.HISTORY))
def test_the_live_measure_agrees_with_the_history(fact):
    got, want = H.measure(fact), H.expected(fact)
    assert got == want, (f"{fact} ({H.HISTORY[fact].question}) on jax {jax.__version__}: HISTORY says {want!r}, "
                         f"this JAX answers {got!r}; re-measure with tools/measure-history")


@pytest.mark.parametrize("fact", list(H.HISTORY))
def test_every_row_starts_at_a_measured_release_and_changes_the_answer(fact):
    since = H.HISTORY[fact].since
    firsts = [first for first, _ in since]
    assert firsts[0] == H.MEASURED[0]
    assert all(f in H.MEASURED for f in firsts), firsts
    assert firsts == sorted(firsts, key=H.MEASURED.index) and len(set(firsts)) == len(firsts)
    values = [value for _, value in since]
    assert all(a != b for a, b in zip(values, values[1:])), f"two adjacent rows say the same: {since}"


def test_the_measures_leave_the_rule_tables_and_process_primitive_as_they_found_them():
    from jax import lax
    tables = {n: dict(t) for n, t in vars(B).items() if n.endswith("batchers") and isinstance(t, dict)}
    process_primitive = B.BatchTrace.process_primitive
    H.measure("unmapped_sin_route"), H.measure("out_axes_move_processed")
    assert B.BatchTrace.process_primitive is process_primitive
    for name, before in tables.items():
        after = getattr(B, name)
        assert after.keys() == before.keys() and all(after[p] is before[p] for p in before), name
    assert any(lax.sin_p in t for t in tables.values())


FACT = H.Fact("a question", (("0.4.36", "old"), ("0.8.2", "middle"), ("0.12.0", "new")))


@pytest.mark.parametrize("version, value", [
    ("0.4.36", "old"), ("0.8.1", "old"), ("0.8.2", "middle"), ("0.11.2", "middle"), ("0.12.0", "new"),
    ("0.13.0", "new"),
])
def test_value_for_takes_the_last_row_at_or_before_the_release(version, value):
    assert FACT.value_for(release(version)) == value


def test_rows_name_each_range_by_its_last_measured_release():
    assert FACT.rows() == [("0.4.36 - 0.8.1", "old"), ("0.8.2 - 0.11.2", "middle"), ("0.12.0 and later", "new")]
    assert H.Fact("q", (("0.4.36", 1),)).rows() == [("0.4.36 and later", 1)]


def test_expected_defaults_to_the_installed_release():
    assert H.expected("layout") == H.HISTORY["layout"].value_for(release(jax.__version__))


def test_an_answer_prints_one_line_naming_the_live_value_and_its_range():
    from grader.core import history
    answer = history.ask("layout")
    line = answer.line()
    assert "\n" not in line and str(answer.value) in line and jax.__version__ in line
    span = next(s for s, v in answer.rows if v == answer.recorded and history._holds_range(s, answer.version))
    assert span in line
