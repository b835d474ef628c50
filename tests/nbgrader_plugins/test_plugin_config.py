"""The course's nbgrader configuration points at the plugins, in the order nbgrader runs them."""
import importlib.util
import pathlib

import pytest
from nbconvert.preprocessors import ClearMetadataPreprocessor, CoalesceStreamsPreprocessor
from nbgrader.preprocessors import AssignLatePenalties, LimitOutput, SaveAutoGrades
from traitlets.config.loader import PyFileConfigLoader

ROOT = pathlib.Path(__file__).resolve().parents[2]


# ---- the course's configuration ---------------------------------------------------------
@pytest.fixture(scope="module")
def course_config():
    return PyFileConfigLoader("nbgrader_config.py", path=str(ROOT / "course")).load_config()


def test_the_judge_runs_between_limit_output_and_save_autogrades(course_config):
    steps = [s if isinstance(s, str) else f"{s.__module__}.{s.__name__}"
             for s in course_config.Autograde.autograde_preprocessors]
    judge = steps.index("grader.judge.preprocessor.JudgeExercises")
    names = [s.rsplit(".", 1)[-1] for s in steps]
    assert names.index(LimitOutput.__name__) < judge < names.index(SaveAutoGrades.__name__)
    assert ClearMetadataPreprocessor.__name__ in names
    assert any(n.endswith("Execute") for n in names)        # nbgrader's Execute, or one built on it


def test_printing_is_merged_after_the_kernel_and_before_anything_reads_or_renders_it(
        course_config):
    """Where ipykernel split one cell's printing depends on timing (tests/judge/test_execute.py):
    merged right after the kernel, before the output is cut, judged, saved or rendered."""
    names = [s.rsplit(".", 1)[-1] for s in steps(course_config)]
    merge = names.index(CoalesceStreamsPreprocessor.__name__)
    assert names[merge - 1].endswith("Execute")
    assert merge < names.index(LimitOutput.__name__) < names.index("JudgeExercises")
    feedback = [s if isinstance(s, str) else s.__name__
                for s in course_config.GenerateFeedback.preprocessors]
    assert feedback.index(CoalesceStreamsPreprocessor.__name__) < \
        feedback.index("CSSHTMLHeaderPreprocessor")


def test_the_course_config_points_at_the_plugins(course_config):
    assert course_config.OverwriteCells.add_missing_cells is True
    assert course_config.Execute.timeout > 0
    assert course_config.ExportApp.plugin_class == "grader.nbgrader_plugins.StatusExportPlugin"
    feedback = [s if isinstance(s, str) else s.__name__
                for s in course_config.GenerateFeedback.preprocessors]
    assert feedback.index("grader.nbgrader_plugins.ClearHiddenTestsInFeedback") == 1
    for dotted in (course_config.ExportApp.plugin_class, feedback[1],
                   "grader.judge.preprocessor.JudgeExercises"):
        module, name = dotted.rsplit(".", 1)
        assert importlib.util.find_spec(module) is not None and name


def steps(course_config):
    return [s if isinstance(s, str) else f"{s.__module__}.{s.__name__}"
            for s in course_config.Autograde.autograde_preprocessors]


def test_the_term_lives_in_the_config(course_config):
    """The one place: exchange (nbgrader 0.9.6's own default, written out), course id, due
    dates, late policy; nbgrader's default really is that exchange."""
    from nbgrader.exchange.default.exchange import Exchange
    assert course_config.Exchange.root == Exchange.root.default_value == \
        "/usr/local/share/nbgrader/exchange"
    assert course_config.CourseDirectory.course_id == "inside-vmap"
    assert isinstance(course_config.DueDates.dates, dict)
    assert course_config.AssignLatePenalties.plugin_class == "grader.nbgrader_plugins.PercentPerDay"
    assert course_config.PercentPerDay.percent > 0


def test_due_dates_are_set_before_late_penalties_are_assigned(course_config):
    names = steps(course_config)
    late = names.index(f"{AssignLatePenalties.__module__}.{AssignLatePenalties.__name__}")
    assert names.index("grader.nbgrader_plugins.SetDueDate") == late - 1


def test_hidden_tests_leave_the_kernels_folder_before_any_kernel_starts(course_config):
    names = steps(course_config)
    hide = names.index("grader.nbgrader_plugins.hidden.HideHiddenTests")
    kernel = next(i for i, n in enumerate(names) if n.endswith("Execute"))
    assert hide == 0 and names.index("grader.nbgrader_plugins.hidden.RestoreHiddenTests") > kernel


def test_every_html_rendering_of_a_submission_is_sanitized(course_config):
    """The formgrader's exporter takes HTMLExporter's configuration; nbgrader's feedback
    converter registers GenerateFeedback.preprocessors on its own exporter instead."""
    sanitize = "grader.nbgrader_plugins.html.SanitizeSubmission"
    assert course_config.HTMLExporter.preprocessors == [sanitize]
    assert course_config.HTMLExporter.filters == {
        "markdown2html": "grader.nbgrader_plugins.html.SafeMarkdown"}
    feedback = [s if isinstance(s, str) else s.__name__
                for s in course_config.GenerateFeedback.preprocessors]
    assert feedback.index(sanitize) == len(feedback) - 2        # after every step that edits


def test_collect_dates_submissions_by_the_exchanges_clock(course_config):
    assert course_config.ExchangeFactory.collect == \
        "grader.nbgrader_plugins.received.ReceivedCollect"
    assert 0 < course_config.SubmissionSize.max_notebook_mb <= 10
