"""Run one release's own torchgen on its own packaged files; print what the matrix compares, as JSON.

Run in a subprocess with PYTHONPATH=<release folder>:<repo root> (see tests/releases/fetch.py),
so `torchgen` is that release's, not the installed one:

    python -m tests.releases.reference > out.json

Prints {"version", "dump": {infos, used_dispatch_keys}, "nodes": [{op, declaration, definition}]}.
Needs only PyYAML and typing_extensions besides the release's torchgen.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torchgen
from torchgen.packaged.autograd import gen_autograd_functions as functions
from torchgen.packaged.autograd import load_derivatives as loader

from tests.parity.torchgen_reference import info_to_json


def main() -> int:
    packaged = Path(torchgen.__file__).parent / "packaged"
    derivatives = packaged / "autograd" / "derivatives.yaml"
    native = packaged / "ATen" / "native" / "native_functions.yaml"
    tags = packaged / "ATen" / "native" / "tags.yaml"
    infos, used = loader.load_derivatives(str(derivatives), str(native), str(tags))
    dump = {
        "infos": [info_to_json(info, key) for per_key in infos.values() for key, info in per_key.items()],
        "used_dispatch_keys": sorted(used),
    }
    nodes = [
        {
            "op": info.op,
            "declaration": functions.process_function(info, functions.FUNCTION_DECLARATION),
            "definition": functions.process_function(info, functions.FUNCTION_DEFINITION),
        }
        for info in functions.get_infos_with_derivatives_list(infos)
    ]
    json.dump({"torchgen": str(Path(torchgen.__file__).parent), "dump": dump, "nodes": nodes}, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
