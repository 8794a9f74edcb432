"""Formula semantics: derivatives.yaml formulas read as the C++ the generated code makes of them.

Layering: below ide/, above aten/ and derivatives/. Nothing here imports LSP types.
- tokens.py: a C++ tokenizer for formula text (offsets into the formula).
- sources.py: where FunctionsManual.h, TensorBody.h, TensorBase.h and the Functions.cpp template live.
- headers.py: the names those files declare (the HeaderIndex); declarations.py reads a header's C++
  declarations; known.py: the short documented list of names no file here declares; headercache.py:
  the header index kept on disk between processes.
- scope.py: the locals the generated code has in scope for one formula.
- resolve.py: every name of a formula resolved -> diagnostics.
- checks.py: the driver of the autograd codegen's own checks (gen_variable_type & co) that an entry can
  trigger; each a module of codegen_rules/; overloads.py: the functions an entry's infos apply to.
- (the plain-data editor features on formulas live in derivls/ide/formula_editor.py)
- entry_formulas.py: the formula diagnostics of one entry (the one call the loader makes per entry).
"""
