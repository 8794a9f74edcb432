"""`derivls gradcheck`: compile an entry's formulas into a small extension and check them with
torch.autograd.gradcheck on OpInfo's sample inputs, in a child process of the user's Python.

Modules: source (the C++ and the plan the child follows), helpers (FunctionsManual helpers the
installed libtorch does not export), build (compile and link, cached), child (the package the
child Python runs by path, child/__main__.py: it never imports derivls), runner (starts the child), results (what it
answers, as diagnostics and a summary: no torch), cli (the command).
"""
