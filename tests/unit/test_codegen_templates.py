"""derivls.codegen.templates: CodeTemplate's substitution rules and the template texts."""

from __future__ import annotations

import pytest

from derivls.codegen import templates as T
from derivls.codegen.templates import CodeTemplate


def test_block_substitution_indents_each_line_and_strips_trailing_space():
    t = CodeTemplate("void f() {\n  $body\n}\n")
    assert t.substitute(body=["a;", "if (x) {\n  b;  \n}"]) == "void f() {\n  a;\n  if (x) {\n    b;\n  }\n}\n"


def test_block_substitution_of_empty_list_leaves_empty_line():
    assert CodeTemplate("{\n  $xs\n}\n").substitute(xs=[]) == "{\n\n}\n"


def test_inline_lists_and_commas():
    t = CodeTemplate("f(a${,rest}) g(${rest,}b) h($rest)")
    assert t.substitute(rest=["x", 1]) == "f(a, x, 1) g(x, 1, b) h(x, 1)"
    assert t.substitute(rest=[]) == "f(a) g(b) h()"


def test_env_and_kwargs():
    t = CodeTemplate("$a-${b}")
    assert t.substitute({"a": 1, "b": 2}, b=3) == "1-3"
    with pytest.raises(KeyError):
        t.substitute(a=1)


def test_same_results_as_torchgen():
    code_template = pytest.importorskip("torchgen.code_template")
    pattern = """\
    int foo($args) {

        $bar
            $bar
        $a+$b
    }
    int commatest(int a${,stuff})
    int notest(int a${,empty,})
    """
    env = dict(args=["hi", 8], bar=["what", 7], a=3, b=4, stuff=["things...", "others"], empty=[])
    assert CodeTemplate(pattern).substitute(**env) == code_template.CodeTemplate(pattern).substitute(**env)


def test_template_texts_are_torchgen_s():
    g = pytest.importorskip("torchgen.packaged.autograd.gen_autograd_functions")
    v = pytest.importorskip("torchgen.packaged.autograd.gen_inplace_or_view_type")
    checked = 0
    for name in dir(T):
        if not name.isupper() or name in ("MISC_GETTER_DEFS", "GETTER_DEFINITION_VEC_SCALAR"):
            continue
        ours = getattr(T, name)
        theirs = getattr(g, name, None)
        if theirs is None:
            theirs = getattr(v, name)
        if isinstance(ours, CodeTemplate):
            assert ours.pattern == theirs.pattern, name
        else:
            assert ours == theirs, name
        checked += 1
    assert checked >= 35
    assert {t.cpp_type(): (d.pattern, body) for t, (d, body) in g.MISC_GETTER_DEFS.items()} == {
        t: (d.pattern, body) for t, (d, body) in T.MISC_GETTER_DEFS.items()
    }


def test_codegen_does_not_import_torch():
    import subprocess
    import sys

    code = (
        "import sys, derivls.codegen, derivls.cli.codegen\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'torchgen'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
