"""The reach index is kept per torch build in derivls's cache folder, and only an index is read back
(derivls.gradcheck.reach: no torch)."""

from __future__ import annotations

from pathlib import Path

from derivls.gradcheck import reach


def _torch(folder: Path, version: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "version.py").write_text(f"__version__ = '{version}'\n")
    return folder


def test_each_torch_build_has_its_own_index_file(tmp_path):
    one = reach.index_path(tmp_path, _torch(tmp_path / "a" / "torch", "2.13.0"))
    same = reach.index_path(tmp_path, tmp_path / "a" / "torch")
    other_version = reach.index_path(tmp_path, _torch(tmp_path / "b" / "torch", "2.13.0+cu"))
    assert one == same and one is not None
    assert one.parent == tmp_path / "gradcheck"
    assert other_version != one
    assert reach.index_path(tmp_path, None) is None
    assert reach.index_path(tmp_path, tmp_path / "no-torch") is None


def test_a_kept_index_is_read_back(tmp_path):
    path = reach.index_path(tmp_path, _torch(tmp_path / "torch", "2.13.0"))
    index = {"aten::_softmax.default": ["softmax", "nn.functional.softmax"]}
    reach.save(path, index)
    assert reach.load(path) == index


def test_what_is_not_an_index_is_not_read(tmp_path):
    path = tmp_path / "gradcheck" / "reach-x.json"
    path.parent.mkdir(parents=True)
    assert reach.load(path) is None  # absent
    for text in ("not json", "[]", '{"aten::x.default": "softmax"}', '{"aten::x.default": [1]}'):
        path.write_text(text)
        assert reach.load(path) is None, text
