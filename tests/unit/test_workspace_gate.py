"""Issue 54: what the workspace supplies to a build (torchgen's templates beside the file, the headers they include)
passes one gate (compile/safety.py `refusals`) before g++ or Cling reads it: `check --compile` and compileOnSave
(compile/engine.py, the precompiled header in toolchain.py), the gradcheck build (gradcheck/build.py) and the
gradcheck session's JIT (gradcheck/jit.py) refuse the same templates. A fake compiler records every file it is
given, so "never reached the compiler" is seen, without g++."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from derivls.compile.file_templates import Templates
from derivls.compile.safety import RefusedSource
from derivls.compile.toolchain import SetupError, Toolchain
from derivls.compile.units import collect_units
from derivls.gradcheck import build as building
from derivls.gradcheck import jit
from derivls.gradcheck.source import render
from derivls.project.analyse import analyse_path

HEAD = '#include "torch/csrc/autograd/FunctionsManual.h"\n'
TAIL = "namespace torch::autograd::generated {\n${autograd_function_definitions}\n} // namespace\n"
MARK = "derivls_issue54_marker"

HOSTILE = {
    "#import": f'#import "torch/csrc/autograd/FunctionsManual.h"\nint {MARK};\n',
    "#include_next": f"#include_next <ATen/ATen.h>\nint {MARK};\n",
    "#embed": f'#embed "/etc/hostname"\nint {MARK};\n',
    "#line": f'#line 1 "backward-1.cpp"\nint {MARK};\n',
    "#define": f"#define {MARK} 1\n",
    "absolute include": f'#include "/etc/hostname"\nint {MARK};\n',
    "include outside by '..'": f'#include "../../{MARK}.h"\n',
    "include through a link out of the folder": f'#include "torch/{MARK}.h"\n',
    "digraph include": f'%:include "/etc/hostname"\nint {MARK};\n',
    "trigraph include": f'??=include "/etc/hostname"\nint {MARK};\n',
    "line splice in a directive": f'#inc\\\nlude "/etc/hostname"\nint {MARK};\n',
    "_Pragma hidden by raw strings": f'auto {MARK} = R"x(")x" _Pragma("GCC error \\"{MARK}\\"") R"x(")x";\n',
    "u8R raw strings": f'auto {MARK} = u8R"x(")x" _Pragma("GCC error \\"{MARK}\\"") u8R"x(")x";\n',
    "asm hidden by raw strings": f'auto {MARK} = LR"(")" __asm__(".include \\"/etc/hostname\\"") LR"(")";\n',
    "__asm": f'int {MARK} = 0; __asm(".incbin \\"/etc/hostname\\"");\n',
    "header unit import": f"import <ATen/ATen.h>;\nint {MARK};\n",
}


@pytest.fixture(scope="module")
def acos_units(real_files):
    analysis, _ = analyse_path(real_files.derivatives, real_files.native, real_files.tags)
    return collect_units(analysis, ["acos"])


@pytest.fixture
def roots(tmp_path: Path, real_files) -> tuple[Path, ...]:
    """A workspace's include folder first (holding a link out of it), then the wheel's torch/include."""
    mine = tmp_path / "include"
    (mine / "torch").mkdir(parents=True)
    outside = tmp_path / "outside.h"
    outside.write_text(f"int {MARK}_outside;\n")
    (mine / "torch" / f"{MARK}.h").symlink_to(outside)
    return (mine, real_files.packaged.parent.parent / "torch" / "include")


@pytest.fixture
def fake_cxx(tmp_path: Path) -> tuple[Path, Path]:
    """A compiler that appends every source it is given to a log, and makes what `-o` names."""
    log = tmp_path / "compiled.log"
    cxx = tmp_path / "fake-g++"
    cxx.write_text(
        "#!/bin/sh\n"
        'prev=""\n'
        'for a in "$@"; do\n'
        f'  case "$a" in *.cpp|*.h) cat "$a" >> {log} ;; esac\n'
        '  if [ "$prev" = "-o" ]; then : > "$a"; fi\n'
        '  prev="$a"\n'
        "done\n"
        "exit 0\n"
    )
    cxx.chmod(cxx.stat().st_mode | stat.S_IXUSR)
    return cxx, log


def _templates(tmp_path: Path, head: str) -> Templates:
    folder = tmp_path / "ws" / "templates"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Functions.cpp").write_text(HEAD + head + TAIL)
    return Templates(folder.parent / "derivatives.yaml")


def _compile(units, templates, toolchain, cache):
    from derivls.compile.engine import compile_units

    return compile_units(units, toolchain, templates, cache=cache, nice=False)


def _gradcheck_build(units, templates, toolchain, cache):
    rendered = render(units, building.LIBRARY_PLACEHOLDER, templates)
    return building.build(rendered.source, toolchain, templates, cache)


def _jit(units, templates, toolchain, cache):
    rendered = render(units, building.LIBRARY_PLACEHOLDER, templates)
    ns = jit.namespace(rendered)
    return jit.jit_source(rendered, ns, jit.includes(building.pch_header(templates)), toolchain.include_dirs)


PATHS = {"check --compile / compileOnSave": _compile, "gradcheck build": _gradcheck_build, "gradcheck JIT": _jit}


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("attack", list(HOSTILE))
def test_a_template_that_brings_text_past_the_gate_is_refused_before_any_compiler_or_cling_reads_it(
    acos_units, tmp_path, roots, fake_cxx, attack, path
):
    cxx, log = fake_cxx
    toolchain = Toolchain(str(cxx), "fake 1.0", roots, ("-std=c++20",))
    templates = _templates(tmp_path, HOSTILE[attack])
    with pytest.raises(RefusedSource) as refused:
        PATHS[path](acos_units, templates, toolchain, tmp_path / "cache")
    assert MARK not in (log.read_text() if log.exists() else "")
    assert MARK not in str(refused.value)  # (it names the line and what is refused, never the template's text)
    assert str(refused.value).startswith("derivls will not compile")


@pytest.mark.parametrize("path", ["check --compile / compileOnSave", "gradcheck JIT"])
def test_a_template_that_includes_torch_headers_only_passes_the_gate(acos_units, tmp_path, roots, fake_cxx, path):
    cxx, log = fake_cxx
    toolchain = Toolchain(str(cxx), "fake 1.0", roots, ("-std=c++20",))
    extra = '#include <ATen/ATen.h>\n#include "torch/csrc/autograd/VariableTypeUtils.h"\n'
    out = PATHS[path](acos_units, _templates(tmp_path, extra), toolchain, tmp_path / "cache")
    seen = log.read_text() if path.startswith("check") else out
    assert "<ATen/ATen.h>" in seen and "AcosBackward0" in seen


def test_the_gate_refuses_the_precompiled_header_before_it_is_built(tmp_path, roots, fake_cxx):
    from derivls.compile.toolchain import ensure_pch

    cxx, log = fake_cxx
    toolchain = Toolchain(str(cxx), "fake 1.0", roots, ("-std=c++20",))
    with pytest.raises(RefusedSource, match=r"precompiled header .*: line 2: an '#include' of a name outside"):
        ensure_pch(toolchain, '#pragma once\n#include "/etc/hostname"\n', tmp_path, nice=False)
    assert not log.exists()
    assert isinstance(RefusedSource("x"), SetupError)  # (every caller reports it as it reports a set-up error)


def test_a_jit_source_of_torchs_own_templates_passes(acos_units, real_files):
    """The real templates and torch's own headers: what the session defines every run is not refused."""
    include = real_files.packaged.parent.parent / "torch" / "include"
    templates = Templates(real_files.derivatives)
    rendered = render(acos_units, building.LIBRARY_PLACEHOLDER, templates)
    source = jit.jit_source(rendered, jit.namespace(rendered), jit.includes(building.pch_header(templates)), [include])
    assert "AcosBackward0" in source
    assert os.path.isdir(include)


HEADER_ATTACKS = {
    "an absolute include": '#include "/etc/hostname"\n',
    "an include out by '..'": '#include "../../secret.env"\n',
    "#include_next": "#include_next <secret.env>\n",
    "#import": '#import "b.h"\n',
    "#embed": '#embed "/etc/hostname"\n',
    "#line": '#line 1 "backward-1.cpp"\n',
    "a directive after a comment": '/* a\n comment */ #include "/etc/hostname"\n',
    "a digraph": '%:include "/etc/hostname"\n',
    "a line splice": '#inc\\\nlude "/etc/hostname"\n',
    "a CR line break": 'int x; // a comment\r#include "/etc/hostname"\n',
    "a computed include": '#define F "/etc/hostname"\n#include F\n',
    "a link out of the folder": '#include "leak.h"\n',
}


@pytest.mark.parametrize("attack", list(HEADER_ATTACKS))
def test_a_header_of_the_include_folder_that_reaches_outside_it_refuses_the_precompiled_header(
    tmp_path, fake_cxx, attack
):
    # issue 54: the template's #include of a header (beside the file: a checkout's torch/include) that includes
    # secret.env made the precompiled header's build fail, quoting it
    from derivls.compile.toolchain import ensure_pch

    root = tmp_path / "torch-include"
    (root / "torch").mkdir(parents=True)
    (tmp_path / "secret.env").write_text(f"API_KEY={MARK}\n")
    (root / "torch" / "leak.h").symlink_to(tmp_path / "secret.env")
    (root / "torch" / "a.h").write_text('#pragma once\n#include <vector>\n#include "b.h"\n')
    (root / "torch" / "b.h").write_text("// b\n" + HEADER_ATTACKS[attack])
    cxx, log = fake_cxx
    toolchain = Toolchain(str(cxx), "fake 1.0", (root,), ("-std=c++20",))
    with pytest.raises(RefusedSource) as refused:
        ensure_pch(toolchain, '#pragma once\n#include "torch/a.h"\n', tmp_path / "cache", nice=False)
    assert not log.exists()
    assert str(refused.value).startswith("derivls will not compile torch's headers: torch/b.h line ")
    assert MARK not in str(refused.value)


def test_headers_that_stay_inside_the_include_folder_are_built(tmp_path, fake_cxx):
    from derivls.compile.toolchain import ensure_pch

    root = tmp_path / "torch-include"
    (root / "torch").mkdir(parents=True)
    (root / "torch" / "a.h").write_text(
        '#pragma once\n#include <vector>\n#include "b.h"\n// see #include "/etc/x" in a comment mid-line\n'
    )
    (root / "torch" / "b.h").write_text('#include "torch/a.h"\n#if __has_include(<x>)\n#endif\n')
    cxx, log = fake_cxx
    toolchain = Toolchain(str(cxx), "fake 1.0", (root,), ("-std=c++20",))
    pch = ensure_pch(toolchain, '#pragma once\n#include "torch/a.h"\n', tmp_path / "cache", nice=False)
    assert pch.built and '#include "torch/a.h"' in log.read_text()


def test_the_wheels_own_headers_pass_the_header_gate(real_files):
    from derivls.compile.safety import header_refusals

    include = real_files.packaged.parent.parent / "torch" / "include"
    header = building.pch_header(Templates(real_files.derivatives))
    assert header_refusals(header, [include, include / "torch" / "csrc" / "api" / "include"]) == []
