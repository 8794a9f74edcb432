"""Codes of native_functions.yaml and tags.yaml themselves: what the release's torchgen rejects while it
reads them (`parse_native_yaml`: NativeFunction.from_yaml, the schema parser, the dispatch keys and
BackendIndex, error_check_native_functions, the generated functions, tags.yaml) and the view grouping
load_derivatives does. Shown in the editor on the open file and by `derivls check` as
`native_functions.yaml:line:col`; see docs/checks.md#native_functionsyaml."""

from __future__ import annotations

from derivls.codes.model import TORCHGEN, Severity, Stage, declare

NATIVE = Stage.NATIVE
_TESTS = "tests/unit/test_native_diagnostics.py"
_WHY = """torchgen reads native_functions.yaml and tags.yaml before derivatives.yaml: `parse_native_yaml` raises
on this, and the build stops there."""


def _native(name: str, summary: str, *, what: str, wrong: str, right: str, fix: str = "", why: str = _WHY):
    return declare(
        name,
        Severity.ERROR,
        NATIVE,
        summary,
        what=what,
        why=why,
        wrong=wrong,
        right=right,
        fix=fix,
        profiles=(TORCHGEN,),
        example=None,
        tested_by=_TESTS,
    )


NATIVE_YAML = _native(
    "native-yaml",
    "native_functions.yaml is not the YAML torchgen reads",
    what="""The file (or an entry) is not YAML torchgen can read: a syntax error, an entry that is not a mapping,
    an entry without `func:`, or a key given twice in one mapping (torchgen's YAML loader refuses duplicates,
    where plain YAML keeps the last).""",
    wrong="(an entry with `variants:` written twice)",
    right="(each key once per entry)",
)
NATIVE_SCHEMA = _native(
    "native-schema",
    "the `func:` schema does not parse or breaks a schema rule",
    what="""torchgen's FunctionSchema.parse rejects the `func:` text: no `-> returns`, an in-place op that does not
    return `self` (`Tensor(a!)`), an out= argument that is not written (`Tensor(a!) out`) or not returned,
    a mutable argument before `self`, more than one namespace level, a bad default or annotation.""",
    wrong="- func: abs_(Tensor(a!) self) -> Tensor",
    right="- func: abs_(Tensor(a!) self) -> Tensor(a!)",
)
NATIVE_UNKNOWN_TYPE = _native(
    "native-unknown-type",
    "a type the release's torchgen does not know",
    what="""An argument or return type of `func:` is no type the release's torchgen knows (a misspelling, or a
    type of another release: `Dimname` is gone in 2.13, `SymBool` came in 2.5).""",
    wrong="- func: abs(Tensr self) -> Tensor",
    right="- func: abs(Tensor self) -> Tensor",
    fix="The known type one edit away, when there is exactly one.",
)
NATIVE_UNKNOWN_KEY = _native(
    "native-unknown-key",
    "an entry key torchgen does not know",
    what="""The entry has a key NativeFunction.from_yaml does not read (torchgen: 'leftover entries').""",
    wrong="- func: abs(Tensor self) -> Tensor\n  device_chek: NoCheck",
    right="- func: abs(Tensor self) -> Tensor\n  device_check: NoCheck",
    fix="The known key one edit away, when there is exactly one.",
)
NATIVE_VALUE_TYPE = _native(
    "native-value-type",
    "a key's value has the wrong kind (a bool, string, list or mapping)",
    what="""A key's value is not of the kind torchgen asserts: `structured`, `device_guard`, `manual_*` and
    `use_const_ref_for_mutable_tensors` are booleans; `variants`, `autogen`, `python_module`, `device_check`,
    `structured_delegate` strings; `cpp_no_default_args` a list; `dispatch` a mapping of strings.""",
    wrong="- func: abs(Tensor self) -> Tensor\n  device_guard: Flase",
    right="- func: abs(Tensor self) -> Tensor\n  device_guard: False",
)
NATIVE_UNKNOWN_VARIANT = _native(
    "native-unknown-variant",
    "a variant other than `function` and `method`",
    what="""`variants:` is a `, `-separated list of `function` and `method`; anything else is an illegal variant.""",
    wrong="  variants: function, methd",
    right="  variants: function, method",
    fix="`function` or `method`, when one edit away.",
)
NATIVE_DEVICE_CHECK = _native(
    "native-device-check",
    "a `device_check` other than ExactSame and NoCheck",
    what="""`device_check:` names a torchgen DeviceCheckType: `ExactSame` (the default) or `NoCheck`.""",
    wrong="  device_check: NoChek",
    right="  device_check: NoCheck",
    fix="`ExactSame` or `NoCheck`, when one edit away.",
)
NATIVE_UNKNOWN_TAG = _native(
    "native-unknown-tag",
    "a tag tags.yaml does not define",
    what="""Every tag of an entry must be defined in tags.yaml (torchgen: 'illegal tag').""",
    wrong="  tags: [core, pointwize]",
    right="  tags: [core, pointwise]",
    fix="The tag of tags.yaml one edit away, when there is exactly one.",
)
NATIVE_DISPATCH_KEY = _native(
    "native-dispatch-key",
    "a dispatch key the release's torchgen does not know or support",
    what="""A key of `dispatch:` is no DispatchKey of the release, or one torchgen does not accept in
    native_functions.yaml (its `dispatch_keys` list: CPU, CUDA, Meta, the Composite* keys and a few more).""",
    wrong="  dispatch:\n    CompositeExplicitAutogrd: abs",
    right="  dispatch:\n    CompositeExplicitAutograd: abs",
    fix="The dispatch key one edit away, when there is exactly one.",
)
NATIVE_DISPATCH_TABLE = _native(
    "native-dispatch-table",
    "a dispatch table torchgen refuses",
    what="""The dispatch table breaks one of from_yaml's rules: `manual_kernel_registration` with a dispatch table;
    a table with only the CompositeImplicitAutograd kernel the function would get anyway (delete it), or
    with one under another name; more than one of the Composite* keys; a factory function (`new_*`, `*_like`,
    tensor options without tensor arguments) without a dispatch table; a kernel with more than 3 namespace
    levels.""",
    wrong="- func: dropout(Tensor input, float p, bool train) -> Tensor\n  dispatch:\n    CompositeImplicitAutograd: dropout",
    right="- func: dropout(Tensor input, float p, bool train) -> Tensor",
)
NATIVE_STRUCTURED = _native(
    "native-structured",
    "structured kernels used against torchgen's rules",
    what="""`structured: True` belongs on the out= overload, `structured_delegate:` on the others and must name an
    existing structured op; a structured delegate has no CPU/CUDA/MPS/XPU/MTIA kernel of its own; structured
    kernels keep device_guard; `structured_inherits` and `precomputed` need `structured: True`; a
    `ufunc_inner_loop` needs a structured op without explicit CPU/CUDA kernels.""",
    wrong="- func: acos(Tensor self) -> Tensor\n  structured_delegate: acos.outt",
    right="- func: acos(Tensor self) -> Tensor\n  structured_delegate: acos.out",
    fix="For a misspelled delegate: the structured op one edit away.",
)
NATIVE_VARIANTS = _native(
    "native-variants",
    "variants torchgen refuses for this function",
    what="""An out= function must have only the function variant; a function in a `python_module` cannot be a
    method.""",
    wrong="- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  variants: function, method",
    right="- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
)
NATIVE_DUPLICATE = _native(
    "native-duplicate",
    "an overload declared twice",
    what="""Two entries declare the same operator (name and overload) or two functions of the same kind with the
    same signature; torchgen's BackendIndex or its grouping refuses the second.""",
    wrong="(two `- func: abs_(Tensor(a!) self) -> Tensor(a!)` entries)",
    right="(one entry per overload)",
)
NATIVE_PYTHON_KEYWORD = _native(
    "native-python-keyword",
    "an argument named like a Python keyword",
    what="""An argument name is a reserved Python keyword (`from`, `lambda`, …), which the Python bindings cannot
    use (error_check_native_functions; three old operators are excepted).""",
    wrong="- func: dropout(Tensor input, float lambda, bool train) -> Tensor",
    right="- func: dropout(Tensor input, float p, bool train) -> Tensor",
)
NATIVE_TAG_RULE = _native(
    "native-tag-rule",
    "a tag a function must (or must not) have",
    what="""A random operator (`rand`/`dropout` in its name or arguments, or a Generator argument) without the
    `nondeterministic_seeded` tag; an `inplace_view` op whose name does not end with `_` or that has no
    out-of-place view op; an in-place view (aliasing `self` in place) without `inplace_view`.""",
    wrong="- func: dropout(Tensor input, float p, bool train) -> Tensor\n  tags: maybe_aliasing_or_mutating",
    right="- func: dropout(Tensor input, float p, bool train) -> Tensor\n  tags: [nondeterministic_seeded, maybe_aliasing_or_mutating]",
)
NATIVE_ENTRY_RULE = _native(
    "native-entry-rule",
    "an entry breaks one of NativeFunction's other rules",
    what="""One of NativeFunction's other invariants: `cpp_no_default_args` must name arguments with defaults;
    `_foreach` ops must have `device_check: NoCheck`; `use_const_ref_for_mutable_tensors` is not allowed on
    out= functions (2.7+).""",
    wrong="- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n  cpp_no_default_args: ['beta']",
    right="- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n  cpp_no_default_args: ['alpha']",
)
NATIVE_GENERATED = _native(
    "native-generated",
    "torchgen cannot generate this function's variants",
    what="""add_generated_native_functions refuses the function: an out= op with no other variant, a function
    without a tensor-like return whose out= variant `autogen:` asks for, or an `autogen:` name that does not
    parse.""",
    wrong="- func: lonely.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: lonely_out",
    right="(the out= op with its functional variant beside it)",
)
NATIVE_VIEW_GROUP = _native(
    "native-view-group",
    "a view op, its view_copy and its in-place view do not fit together",
    what="""The view grouping load_derivatives runs (get_grouped_by_view_native_functions) refuses the group: a
    view op without its `_copy` variant, a `_copy` variant without the `view_copy` tag or with another
    signature, an in-place view with another signature or kernels.""",
    wrong="(transpose_copy.int without `tags: view_copy`)",
    right="(transpose_copy.int with `tags: view_copy`)",
    why="""load_derivatives groups the view ops of native_functions.yaml before it reads derivatives.yaml: the
    build stops on this.""",
)
NATIVE_TAGS_YAML = _native(
    "native-tags-yaml",
    "tags.yaml is not what torchgen reads",
    what="""A tags.yaml item without `tag:`, without a description (`desc:` missing or empty), or with a key given
    twice.""",
    wrong="- tag: core\n  desc: ''",
    right="- tag: core\n  desc: the core ATen opset",
)
NATIVE_LEFT_OUT_HERE = declare(
    "native-left-out",
    Severity.WARNING,
    NATIVE,
    "something this release may not know: the function is left out",
    what="""The function uses what the selected rules do not know (a type, key, tag, dispatch key or schema form),
    and the release is not known exactly (no version.txt, torch/version.py, --torch-version or setting, or a
    release newer than derivls knows): it may be a newer release's feature, so it is a warning, and the
    function is left out of the index. With the release known, the same is an error under its own code.""",
    why="""Not a build error when a newer torchgen knows it; an error with the release that does not.""",
    wrong="(a native_functions.yaml newer than every release derivls knows)",
    right="(--torch-version, the `torchVersion` setting, or the checkout's version.txt)",
    fix="Pick the release with --torch-version or the `torchVersion` setting, or fix the spelling.",
    profiles=(TORCHGEN,),
    example=None,
    tested_by=_TESTS,
)
