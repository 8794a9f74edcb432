"""The gradcheck child: the package the chosen Python runs by path, `python -I child/__main__.py` (one run:
derivls/gradcheck/runner.py) or with `--serve` (a session: derivls/gradcheck/session.py). It imports torch,
never derivls (that Python may not have it); every module gets torch as an argument from the entry points.

Modules, each one job (each imports only the ones above it in this list):
  protocol  the JSON lines written on stdout, a message cut short, the resident memory
  limits    what one check may cost (sizes, seconds: time_limit) and the exceptions that stop one
  values    a call's positional values, the real op called on them, the tensors a check varies, tensor trees
  nested    an AutogradNestedTensor formula's samples: the Default's made nested, and gradcheck's flat view
  layouts   inputs made by hand for nested constructors and ops with a sparse argument (held constant)
  opinfo    what OpInfo says: foreach OpInfos, skips, gradcheck_wrapper transforms, reference inputs
  reach     the reach index: the overloads each OpInfo's and ModuleInfo's samples reach
  lineage   forward intermediates of a sample a backward made, computed again from the varied inputs
  samples   find_samples: OpInfo's (and ModuleInfo's) samples at the level of the overload they reach
  schema    inputs made from the schema when no sample reaches an overload
  variants  inputs where mistakes live: special values, quadrants, number arguments, the call's structure
  operands  operands OpInfo's samples lack: a floating input given as integers, a NaN the op ignores
  checks    check_unit: gradcheck / check_forward_ad / gradgradcheck of one unit, its failures
  jit       the session's JIT: the extension's code defined by Cling in the process
  oneshot   main: one run (the request, samples, the checks, the repair phase)
  serve     serve: the session loop (`--serve`)

How they find each other: `__main__.py` imports this folder as the package `derivls_gradcheck_child` by its
path (not from sys.path, see its doc), and the modules import each other relatively (`from .values import
positional`): the same code is read as derivls.gradcheck.child by derivls's linters and type checker. This file
imports nothing: loading the package runs no module until the entry asks for one.
"""
