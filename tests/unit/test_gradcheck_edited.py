"""derivls.gradcheck.edited: which FunctionsManual.cpp a run uses, against which base its helpers are edited, and
what an extension then defines (nothing when no checked entry reaches an edited helper: `--all` as before)."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from derivls.base.exits import UsageError
from derivls.gradcheck import edited

MANUAL = textwrap.dedent(
    """\
    namespace torch::autograd::generated::details {
    using at::Tensor;

    static Tensor twice(const Tensor& t) { return t * 2; }

    Tensor a_backward(const Tensor& grad) { return twice(grad); }

    Tensor b_backward(const Tensor& grad) { return grad.neg(); }
    }
    """
)


def unit(*formulas: str) -> SimpleNamespace:
    info = SimpleNamespace(
        derivatives=[SimpleNamespace(formula=f) for f in formulas],
        forward_derivatives=[],
        all_saved_inputs=[],
        all_saved_outputs=[],
    )
    return SimpleNamespace(info=info, entry_line=0, name="XBackward0")


def git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
        cwd=folder,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    path = tmp_path / "FunctionsManual.cpp"
    path.write_text(MANUAL)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    return path


def test_since_tells_edits_against_the_file_at_that_revision(repository):
    repository.write_text(MANUAL.replace("return t * 2;", "return t * 3;").replace("grad.neg()", "grad .neg() /*x*/"))
    found = edited.load(repository, since="HEAD")
    assert found.base == "--since HEAD" and found.known_base
    assert found.edited == {"twice"}  # (b_backward: only layout and a comment changed)
    # a_backward calls the edited twice: both defined; b_backward reaches nothing edited
    assert found.to_define([unit("a_backward(grad)")]) == {"a_backward", "twice"}
    assert found.code([unit("b_backward(grad)")]) is None
    assert found.blamed(unit("a_backward(grad)")) == {"twice"}


def test_nothing_edited_defines_nothing(repository):
    found = edited.load(repository, since="HEAD")
    assert found.edited == frozenset()
    assert found.code([unit("a_backward(grad)"), unit("b_backward(grad)")]) is None


def test_without_since_the_base_is_the_commit_torch_was_built_from(repository, monkeypatch):
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repository.parent, capture_output=True, text=True, check=True
    ).stdout.strip()
    repository.write_text(MANUAL.replace("grad.neg()", "-grad"))
    monkeypatch.setattr(edited, "torch_commit", lambda python: commit)
    found = edited.load(repository, python="python")
    assert found.base == f"torch's commit {commit[:12]}"
    assert found.edited == {"b_backward"}


def test_without_a_known_base_every_helper_counts_as_edited(tmp_path, monkeypatch):
    path = tmp_path / "FunctionsManual.cpp"
    path.write_text(MANUAL)
    monkeypatch.setattr(edited, "torch_commit", lambda python: "cf30153c4c131c8164ee7798e5022d810682e2cb")
    found = edited.load(path, python="python")
    assert not found.known_base and found.base.startswith("no base")
    assert found.edited == {"twice", "a_backward", "b_backward"}
    # a failure is reported on the helpers the formula calls itself, not on every helper below them
    assert found.blamed(unit("a_backward(grad)")) == {"a_backward"}


def test_a_bad_since_is_a_usage_error(repository):
    with pytest.raises(UsageError, match="not a commit"):
        edited.load(repository, since="no-such-ref")


def test_a_file_new_at_the_revision_is_all_edited(repository):
    other = repository.with_name("Other.cpp")
    other.write_text(MANUAL)
    found = edited.load(other, since="HEAD")
    assert found.edited == {"twice", "a_backward", "b_backward"} and "new" in found.base


@pytest.mark.parametrize(
    ("content", "words"),
    [(None, "not found"), (b"Tensor f();\x00\n", "NUL"), (b"\xff\xfe\x00", "UTF-8")],
)
def test_a_manual_that_is_no_text_is_refused(tmp_path, content, words):
    path = tmp_path / "FunctionsManual.cpp"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(UsageError, match=words):
        edited.find_manual(tmp_path / "derivatives.yaml", path)


def test_the_checkouts_manual_is_found_beside_its_derivatives(tmp_path):
    (tmp_path / "tools" / "autograd").mkdir(parents=True)
    derivatives = tmp_path / "tools" / "autograd" / "derivatives.yaml"
    derivatives.write_text("")
    assert edited.find_manual(derivatives, None) is None
    manual = tmp_path / "torch" / "csrc" / "autograd" / "FunctionsManual.cpp"
    manual.parent.mkdir(parents=True)
    manual.write_text(MANUAL)
    assert edited.find_manual(derivatives, None) == manual


def test_reached_helpers_are_kept_by_the_formulas_text_not_by_the_unit_object():
    found = edited.EditedManual(Path("F.cpp"), edited.manual_text.parse_manual(MANUAL), frozenset({"twice"}), "x")
    assert found.reached(unit("a_backward(grad)")) == {"a_backward", "twice"}
    # (another unit object, as collect_units makes anew, with other formulas: its own answer)
    assert found.reached(unit("b_backward(grad)")) == {"b_backward"}
