"""The codegen-stage rules: the checks torchgen's autograd codegen makes after load_derivatives (gen_variable_type
& co), one module per rule (or per small family of rules on the same site).

Each module holds the check of its code(s): `check(o: OverloadContext) -> Iterator[Diagnostic]` for a check
torchgen makes on every overload the entry's infos apply to (context.py: the section's keys and spans,
`o.at`, and what gen_variable_type derives for the overload: its differentiable inputs and outputs, whether
it requires a derivative), or `check(s: SectionContext)` for one made once per section (argument_kinds.py).
The code itself — name, severity, summary and user doc — is declared once in derivls/codes/codegen.py.

To add a rule:

1. declare its code in derivls/codes/codegen.py (`MY_RULE = declare("codegen-my-rule", ...)`, with its doc and
   a `wrong`/`right` example that tests/codes runs), and run `python -m derivls.codes.docs`;
2. write `codegen_rules/my_rule.py`: `def check(o: OverloadContext) -> Iterator[Diagnostic]`, yielding
   `error(span, MY_RULE, message)`; what several rules derive from the overload goes in context.py, never in
   another rule;
3. list it in checks.py's `OVERLOAD_RULES` (or `SECTION_RULES`) at the place torchgen makes the check: in the
   stage whose gate must hold for it to run, marked `ENDS` if torchgen stops judging the overload there
   (derivls then reports nothing more on it); and test it with a seeded edit of the real file in
   tests/parity/test_codegen_stage_parity.py (torchgen's codegen judges it).
"""
