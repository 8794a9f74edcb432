"""The formula rules: one module per rule (or per small family of rules on the same site).

Each module holds the check(s) of its code(s): a function that takes the formula's tokens (or the shared
context `exprtypes._Calls` of its calls: tokens, brackets, scope, headers, declared names, call sites) and
returns `findings.Finding`s. The code itself — name, severity, summary and user doc — is declared once in
derivls/codes/formula.py (the registry every layer imports), not here.

To add a rule:

1. declare its code in derivls/codes/formula.py (`MY_RULE = declare("formula-my-rule", ...)`, with its doc
   and a `wrong`/`right` example that tests/codes runs), and run `python -m derivls.codes.docs`;
2. write `rules/my_rule.py`: `def check(c: _Calls) -> list[Finding]` (or on tokens), returning
   `Finding(MY_RULE, MY_RULE.severity, start, end, message, suggestions, rewrites)`; shared typing goes in
   exprtypes.py, never in another rule;
3. call it from `resolve()` in resolve.py (under the condition that makes it cheap to skip), and test it
   in tests/formulas/rules/test_my_rule.py on the scope of a real entry (see the fixtures there).
"""
