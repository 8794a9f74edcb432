"""`derivls check --compile` and compile-on-save: the generated C++ compiled against torch's headers.

Entry points: `derivls.cli.compile` (add_compile_arguments, run_compile, compile_file),
`derivls.compile.engine.compile_units` (no printing), `derivls.compile.job.CompileOnSave` (the
LSP-free compile-on-save engine; its subprocess is `python -m derivls.compile.worker`).
"""
